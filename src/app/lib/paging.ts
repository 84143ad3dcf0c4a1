// In charge of how server-rendered lists are paged and searched: the page number and search text
// read from a page's query string (bounded, whatever the URL says), the SQL pattern a search
// becomes, and the shape a query hands back. Every list a page renders goes through here, so no
// page grows with the data behind it.

/** Past this page nobody is browsing; the bound keeps OFFSET (rows read and thrown away) small. */
export const MAX_PAGE = 1000;
/** Searches longer than any name or e-mail address are cut, not refused. */
export const MAX_SEARCH_LENGTH = 100;

export interface PageRequest {
  /** 1-based */
  page: number;
  /** trimmed; '' when not searching */
  q: string;
}

export interface Paged<T> {
  items: T[];
  page: number;
  size: number;
  /** every row matching, when the query counts them */
  total: number | null;
  hasNext: boolean;
  q: string;
}

type Params = Record<string, string | string[] | undefined>;

const first = (v: string | string[] | undefined): string => (Array.isArray(v) ? (v[0] ?? '') : (v ?? ''));

/** The page and search a list's query parameters ask for (`page`/`q`, or prefixed ones). */
export function pageRequest(
  params: Params,
  names: { page: string; q?: string } = { page: 'page', q: 'q' },
): PageRequest {
  const raw = first(params[names.page]);
  const n = /^\d{1,6}$/.test(raw) ? Number(raw) : 1;
  const q = names.q
    ? first(params[names.q])
        .replace(/\p{Cc}/gu, ' ')
        .trim()
        .slice(0, MAX_SEARCH_LENGTH)
    : '';
  return { page: Math.min(Math.max(n, 1), MAX_PAGE), q };
}

/** `q` as an ILIKE pattern matching it anywhere, its own wildcards taken literally. */
export function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** LIMIT and OFFSET for a page: one row more than shown says whether there is a next page. */
export function pageWindow(request: PageRequest, size: number): { limit: number; offset: number } {
  return { limit: size + 1, offset: (request.page - 1) * size };
}

/** The page's rows (the extra one dropped) and what the controls need. */
export function paged<T>(
  rows: T[],
  request: PageRequest,
  size: number,
  total: number | null = null,
): Paged<T> {
  return {
    items: rows.slice(0, size),
    page: request.page,
    size,
    total,
    hasNext: rows.length > size && request.page < MAX_PAGE,
    q: request.q,
  };
}

/** The last page that has rows, for a page number past the end. */
/** The first `size` of rows read with one extra, and whether there were more than `size`. */
export function firstOf<T>(rows: T[], size: number): { items: T[]; more: boolean } {
  return { items: rows.slice(0, size), more: rows.length > size };
}

export function lastPage(total: number, size: number): number {
  return Math.min(Math.max(1, Math.ceil(total / size)), MAX_PAGE);
}
