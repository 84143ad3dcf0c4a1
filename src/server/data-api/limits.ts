// In charge of what one data-API request may cost, so no caller can exhaust the service for the
// others: filter inputs checked before planning, rows capped per response and per embedded array
// (PostgREST's db-max-rows), and the refusal of a response body that sql.ts measured inside
// PostgreSQL and found too large. Pure.
import { HttpError } from '../http/errors.js';
import type { FilterNode } from './grammar.js';
import type { PlannedItem, ReadPlan } from './plan.js';
import type { ApiRequest } from './request.js';

export interface RequestLimits {
  maxRows: number;
  maxResponseBytes: number;
  maxPatternLength: number;
  maxFilterTerms: number;
  /** aggregates in select (off unless the operator allows them) */
  aggregatesEnabled?: boolean;
}

/**
 * Operators whose value is a pattern (or, quantified, a list of patterns) matched against every
 * candidate row: like/ilike patterns and match/imatch regular expressions.
 */
const PATTERN_OPERATORS = new Set(['like', 'ilike', 'match', 'imatch']);

function limitError(message: string, details: string): HttpError {
  return new HttpError(400, message, { code: 'PGRST100', details });
}

/**
 * Refuses filters that would make the database do unbounded work: too many conditions (every
 * term of every or/and tree counts) or a pattern longer than the limit. Matching a pattern costs
 * time in proportion to its length times each row's text, so both are bounded.
 */
export function checkFilterInputs(request: ApiRequest, limits: RequestLimits): void {
  let terms = 0;
  const visit = (node: FilterNode): void => {
    if (node.kind !== 'condition') {
      node.items.forEach(visit);
      return;
    }
    terms += 1;
    if (terms > limits.maxFilterTerms) {
      throw limitError(
        `Too many filter conditions: the limit is ${limits.maxFilterTerms}`,
        'DATA_API_MAX_FILTER_TERMS bounds the conditions of one request, counting each term of or/and',
      );
    }
    if (PATTERN_OPERATORS.has(node.operator) && typeof node.value === 'string') {
      const length = [...node.value].length;
      if (length > limits.maxPatternLength) {
        throw limitError(
          `The ${node.operator} pattern on "${node.column}" is ${length} characters long; the limit is ${limits.maxPatternLength}`,
          'DATA_API_MAX_PATTERN_LENGTH bounds the length of one like/ilike pattern or match/imatch expression',
        );
      }
    }
  };
  request.filters.forEach(visit);
}

function capped(limit: number | undefined, maxRows: number): number {
  return limit === undefined ? maxRows : Math.min(limit, maxRows);
}

/** Every embedded array, at any depth, returns at most maxRows rows. */
export function capEmbeds(items: PlannedItem[], maxRows: number): PlannedItem[] {
  return items.map((item) => {
    if (item.kind !== 'embed') return item;
    const embed = item.embed;
    return {
      ...item,
      embed: {
        ...embed,
        items: capEmbeds(embed.items, maxRows),
        ...(embed.toOne ? {} : { limit: capped(embed.limit, maxRows) }),
      },
    };
  });
}

/** A read returns at most maxRows rows at the top level and in every embedded array. */
export function capRead(plan: ReadPlan, maxRows: number): ReadPlan {
  return { ...plan, items: capEmbeds(plan.items, maxRows), limit: capped(plan.limit, maxRows) };
}

/**
 * The answer when the guarded body was too large: the caller should ask for less. A statement
 * stopped early knows only that the body would be more than `bytes`.
 */
export function responseTooLarge(
  bytes: number,
  maxBytes: number,
  how: { stoppedEarly?: boolean } = {},
): HttpError {
  const size = how.stoppedEarly ? `more than ${bytes}` : String(bytes);
  return new HttpError(400, `The response would be ${size} bytes; the limit is ${maxBytes}`, {
    code: 'TNTRY413',
    details: 'DATA_API_MAX_RESPONSE_BYTES bounds the size of one response body',
    hint: 'Select fewer columns or embedded rows, or page with limit and offset',
  });
}
