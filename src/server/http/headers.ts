// In charge of what request handling needs from request headers: reading one by name, and (for
// the data API's request.headers) going over all of them. Both web Headers (Hono) and node:http's
// IncomingMessage headers (nodeHeaders) provide it.
import type { IncomingHttpHeaders } from 'node:http';

export interface HeaderReader {
  /** the header's value (repeated headers joined with ", "), or null when absent */
  get(name: string): string | null;
  /** every header, names in lower case (repeated headers joined with ", "), where the reader has them all */
  forEach?(fn: (value: string, name: string) => void): void;
}

/** node:http's parsed headers (names already lower-case) read like web Headers. */
export function nodeHeaders(headers: IncomingHttpHeaders): HeaderReader {
  return {
    get(name) {
      const value = headers[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
    forEach(fn) {
      for (const [name, value] of Object.entries(headers)) {
        if (value !== undefined) fn(Array.isArray(value) ? value.join(', ') : value, name);
      }
    },
  };
}
