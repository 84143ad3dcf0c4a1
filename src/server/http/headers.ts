// In charge of the one thing request handling needs from request headers: reading one by name.
// Both web Headers (Hono) and node:http's IncomingMessage headers (nodeHeaders) provide it.
import type { IncomingHttpHeaders } from 'node:http';

export interface HeaderReader {
  /** the header's value (repeated headers joined with ", "), or null when absent */
  get(name: string): string | null;
}

/** node:http's parsed headers (names already lower-case) read like web Headers. */
export function nodeHeaders(headers: IncomingHttpHeaders): HeaderReader {
  return {
    get(name) {
      const value = headers[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
  };
}
