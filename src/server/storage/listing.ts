// In charge of listing a bucket as the caller may see it: v1 (one folder level under a prefix,
// folders first, names relative to the prefix, offset paging) and v2 (keys under a prefix, full
// names, optional delimiter folders, cursor paging that says whether more follow).
import type { Claims } from '../db/transactions.js';
import { asCaller, type StorageDeps } from './context.js';
import { storageErrors } from './errors.js';
import { intParam, stringParam } from './shapes.js';

/** LIKE's special characters escaped, so a prefix or search matches literally. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}

function sortOf(value: unknown, columns: readonly string[]): { column: string; order: 'asc' | 'desc' } {
  const sort = (value ?? {}) as { column?: unknown; order?: unknown };
  if (typeof sort !== 'object' || Array.isArray(sort))
    throw storageErrors.invalidRequest('sortBy must be an object');
  const column = sort.column ?? 'name';
  const order = typeof sort.order === 'string' ? sort.order.toLowerCase() : 'asc';
  if (typeof column !== 'string' || !columns.includes(column)) {
    throw storageErrors.invalidRequest(`sortBy.column must be one of ${columns.join(', ')}`);
  }
  if (order !== 'asc' && order !== 'desc')
    throw storageErrors.invalidRequest('sortBy.order must be asc or desc');
  return { column, order };
}

/** POST /object/list/{bucket}: one level under the prefix (treated as a folder). */
export async function listV1(
  deps: StorageDeps,
  claims: Claims,
  bucketId: string,
  body: Record<string, unknown>,
) {
  let prefix = stringParam(body.prefix, 'prefix') ?? '';
  if (prefix !== '' && !prefix.endsWith('/')) prefix += '/';
  prefix = prefix.replace(/^\/+/, '');
  const search = stringParam(body.search, 'search') ?? '';
  const limit = intParam(body.limit, 'limit', 100, 0, 1500);
  const offset = intParam(body.offset, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
  const { column, order } = sortOf(body.sortBy, ['name', 'updated_at', 'created_at', 'last_accessed_at']);
  // column and order come from the fixed lists above.
  return asCaller(deps, claims, async (tx) => {
    const { rows } = await tx.query(
      `with m as (
         select o.id, substr(o.name, char_length($2) + 1) as rest, o.updated_at, o.created_at,
                o.last_accessed_at, o.metadata
         from storage.objects o
         where o.bucket_id = $1 and o.name like $3 || '%'
           and substr(o.name, char_length($2) + 1) ilike $4 || '%'
       ), listed as (
         select distinct split_part(rest, '/', 1) as name, null::uuid as id, null::timestamptz as updated_at,
                null::timestamptz as created_at, null::timestamptz as last_accessed_at, null::jsonb as metadata,
                0 as kind
         from m where position('/' in rest) > 0
         union all
         select rest, id, updated_at, created_at, last_accessed_at, metadata, 1 from m where position('/' in rest) = 0
       )
       select name, id, updated_at, created_at, last_accessed_at, metadata from listed
       order by kind, ${column} ${order}, name collate "C" ${order}
       limit $5 offset $6`,
      [bucketId, prefix, likeLiteral(prefix), likeLiteral(search), limit, offset],
    );
    return rows;
  });
}

interface Cursor {
  /** the last item's sort value (a name, or a timestamp as ISO text) */
  v: string;
  /** the last item's full name, the tie-breaker */
  n: string;
}

function decodeCursor(value: unknown): Cursor | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw storageErrors.invalidRequest('cursor must be a string');
  try {
    const parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as Partial<Cursor>;
    if (typeof parsed.v === 'string' && typeof parsed.n === 'string') return { v: parsed.v, n: parsed.n };
  } catch {
    // answered below
  }
  throw storageErrors.invalidRequest('Invalid cursor');
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

interface V2Row {
  name: string;
  is_folder: boolean;
  id: string | null;
  updated_at: Date | null;
  created_at: Date | null;
  last_accessed_at: Date | null;
  metadata: unknown;
  sort_value: string;
}

/** POST /object/list-v2/{bucket}: keys under a raw prefix, in pages that end with a cursor. */
export async function listV2(
  deps: StorageDeps,
  claims: Claims,
  bucketId: string,
  body: Record<string, unknown>,
) {
  const prefix = (stringParam(body.prefix, 'prefix') ?? '').replace(/^\/+/, '');
  const limit = intParam(body.limit, 'limit', 1000, 1, 1000);
  const delimiter = body.with_delimiter === true;
  const { column, order } = sortOf(body.sortBy, ['name', 'updated_at', 'created_at']);
  const cursor = decodeCursor(body.cursor);
  // Pages follow the sort column with the name breaking ties; a folder sorts by its contents'
  // first creation and last update. Column and order come from fixed lists.
  const sortColumn = column;
  const sortExpr = sortColumn === 'name' ? 'name collate "C"' : sortColumn;
  const cmp = order === 'asc' ? '>' : '<';
  const after =
    sortColumn === 'name'
      ? `($4::text is null or name collate "C" ${cmp} $4)`
      : `($4::text is null or (${sortColumn}, name collate "C") ${cmp} ($4::timestamptz, $5::text collate "C"))`;
  return asCaller(deps, claims, async (tx) => {
    const { rows } = await tx.query<V2Row>(
      `with m as (
         select o.id, o.name, substr(o.name, char_length($2) + 1) as rest, o.updated_at, o.created_at,
                o.last_accessed_at, o.metadata
         from storage.objects o where o.bucket_id = $1 and o.name like $3 || '%'
       ), items as (
         ${
           delimiter
             ? `select $2 || split_part(rest, '/', 1) as name, true as is_folder, null::uuid as id,
                       max(updated_at) as updated_at, min(created_at) as created_at,
                       max(last_accessed_at) as last_accessed_at, null::jsonb as metadata
                from m where position('/' in rest) > 0 group by split_part(rest, '/', 1)
                union all
                select name, false, id, updated_at, created_at, last_accessed_at, metadata
                from m where position('/' in rest) = 0`
             : `select name, false as is_folder, id, updated_at, created_at, last_accessed_at, metadata from m`
         }
       )
       select *, ${sortColumn === 'name' ? 'name' : `to_char(${sortColumn} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`} as sort_value
       from items where ${after}
       order by ${sortExpr} ${order}, name collate "C" ${order}
       limit ${sortColumn === 'name' ? '$5' : '$6'}`,
      sortColumn === 'name'
        ? [bucketId, prefix, likeLiteral(prefix), cursor ? cursor.v : null, limit + 1]
        : [
            bucketId,
            prefix,
            likeLiteral(prefix),
            cursor ? cursor.v : null,
            cursor ? cursor.n : null,
            limit + 1,
          ],
    );
    const hasNext = rows.length > limit;
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      hasNext,
      folders: page.filter((r) => r.is_folder).map((r) => ({ key: r.name, name: `${r.name}/` })),
      objects: page
        .filter((r) => !r.is_folder)
        .map((r) => ({
          id: r.id,
          key: r.name,
          name: r.name,
          updated_at: r.updated_at,
          created_at: r.created_at,
          last_accessed_at: r.last_accessed_at,
          metadata: r.metadata,
        })),
      ...(hasNext && last ? { nextCursor: encodeCursor({ v: last.sort_value, n: last.name }) } : {}),
    };
  });
}
