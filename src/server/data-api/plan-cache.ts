// In charge of remembering read plans by request shape (decision 0029): a GET or HEAD's parsed
// request and statement depend only on its method, URL, negotiating headers and the schema, never
// on the caller (row-level security applies in the database), so a repeated read skips parsing,
// planning and writing SQL.
import type { ApiInput } from '../http/reply.js';
import type { Prepared } from './execute.js';
import type { ApiRequest } from './request.js';
import type { Schema } from './schema-cache.js';

/** A request's plan, reusable by any request with the same shape (method, URL, negotiating headers). */
export interface Planned {
  request: ApiRequest;
  prepared: Prepared;
  tzNames: Set<string> | null;
}

/** Reads whose URL is longer than this are planned every time (the cache keeps short keys only). */
const MAX_CACHED_URL = 2048;
/** Planned reads kept per schema version, least recently used dropped first. */
const MAX_CACHED_PLANS = 500;

/**
 * GET and HEAD plans by request shape. A read's SQL depends only on its URL, the headers that
 * negotiate it and the schema, never on the caller (row-level security applies in the database),
 * so a repeated read skips parsing and planning. Entries belong to one schema version: a reload
 * starts afresh.
 */
export class PlanCache {
  private schema: Schema | undefined;
  private readonly plans = new Map<string, Planned>();

  static key(input: ApiInput): string | null {
    if ((input.method !== 'GET' && input.method !== 'HEAD') || input.url.length > MAX_CACHED_URL) return null;
    const h = input.headers;
    return `${input.method} ${input.url}\n${h.get('accept') ?? ''}\n${h.get('prefer') ?? ''}\n${h.get('range') ?? ''}\n${h.get('accept-profile') ?? ''}`;
  }

  get(schema: Schema, key: string): Planned | undefined {
    if (schema !== this.schema) return undefined;
    const planned = this.plans.get(key);
    if (planned) {
      this.plans.delete(key);
      this.plans.set(key, planned);
    }
    return planned;
  }

  set(schema: Schema, key: string, planned: Planned): void {
    if (schema !== this.schema) {
      this.schema = schema;
      this.plans.clear();
    }
    if (this.plans.size >= MAX_CACHED_PLANS) this.plans.delete(this.plans.keys().next().value!);
    this.plans.set(key, planned);
  }
}
