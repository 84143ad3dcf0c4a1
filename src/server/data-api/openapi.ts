// In charge of the data API's own description, GET /rest/v1/: a Swagger 2.0 document in
// PostgREST's shape (its definitions, parameter names and path items), built from the schema cache
// and from what the caller's role may use (openapi-access.ts). Pure: same inputs, same document.
import { HttpError } from '../http/errors.js';
import type { FunctionAccess, RelationAccess, SchemaAccess } from './openapi-access.js';
import type { DbFunction, Schema, Table } from './schema-cache.js';

export const OPENAPI_MEDIA_TYPE = 'application/openapi+json';

const ACCEPTED = new Set([OPENAPI_MEDIA_TYPE, 'application/json', 'application/*', '*/*', '']);

/** The description is JSON: an Accept header that allows none of its types is refused, as PostgREST does. */
export function acceptsOpenApi(accept: string | null): void {
  if (accept === null) return;
  const types = accept.split(',').map((t) => t.split(';')[0]!.trim().toLowerCase());
  if (!types.some((t) => ACCEPTED.has(t))) {
    throw new HttpError(406, `None of these media types are available: ${accept.slice(0, 200)}`, {
      code: 'PGRST107',
    });
  }
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json | undefined };
type JsonObject = { [key: string]: Json | undefined };

const OBJECT_MEDIA = [
  'application/json',
  'application/vnd.pgrst.object+json;nulls=stripped',
  'application/vnd.pgrst.object+json',
];
const ALL_MEDIA = [...OBJECT_MEDIA, 'text/csv'];

/** A type as PostgREST names it: format_type() without modifiers (`numeric(8,2)` is `numeric`). */
function baseType(type: string): string {
  return type.replace(/\(\d+(,\d+)?\)/g, '');
}

/** Swagger's type for a PostgreSQL type; JSON may be anything, so it has none. */
function swaggerType(type: string): string | undefined {
  switch (type) {
    case 'character varying':
    case 'character':
    case 'text':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'smallint':
    case 'integer':
    case 'bigint':
      return 'integer';
    case 'numeric':
    case 'real':
    case 'double precision':
      return 'number';
    case 'json':
    case 'jsonb':
      return undefined;
    default:
      return type.endsWith('[]') ? 'array' : 'string';
  }
}

function swaggerFormat(type: string): string {
  if (type === 'smallint' || type === 'integer') return 'int32';
  if (type === 'bigint') return 'int64';
  return type;
}

/** `items` of an array type: its element's Swagger type (none for json[]). */
function arrayItems(type: string): JsonObject | undefined {
  if (swaggerType(type) !== 'array') return undefined;
  const element = swaggerType(type.slice(0, -2));
  return element === undefined ? {} : { type: element };
}

function maxLength(fullType: string): number | undefined {
  const match = /^character(?: varying)?\((\d+)\)$/.exec(fullType);
  return match ? Number(match[1]) : undefined;
}

/**
 * A column default as a JSON value, as PostgREST reads it: a string column's literal loses its
 * cast and quotes; anything that is not JSON (`now()` on a number, `nextval(…)`) is left out.
 */
function parseDefault(type: string, expression: string | null): Json | undefined {
  if (expression === null) return undefined;
  let text = expression;
  if (swaggerType(type) === 'string') {
    const unqualified = type.replace(/^[^.]+\./, '');
    for (const suffix of [`::${type}`, `::${unqualified}`]) {
      if (text.endsWith(suffix)) {
        text = text.slice(0, -suffix.length).replace(/^'+|'+$/g, '');
        break;
      }
    }
    text = `"${text}"`;
  }
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}

function splitDescription(text: string | null): { summary?: string; description?: string } {
  if (text === null) return {};
  const newline = text.indexOf('\n');
  if (newline < 0) return { summary: text };
  const rest = text.slice(newline).replace(/^\n+/, '');
  return { summary: text.slice(0, newline), ...(rest ? { description: rest } : {}) };
}

/** Drops undefined members, so the document carries only what is known. */
function compact(object: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined));
}

function property(schema: Schema, table: Table, access: RelationAccess, columnName: string): JsonObject {
  const column = table.columns.get(columnName)!;
  const type = baseType(column.type);
  const notes = ['Note:'];
  if (table.primaryKey.includes(column.name)) notes.push('This is a Primary Key.<pk/>');
  const fk = schema.relationships.find(
    (r) => r.table === table.name && r.columns.length === 1 && r.columns[0] === column.name,
  );
  if (fk) {
    const [to, col] = [fk.foreignTable, fk.foreignColumns[0]];
    notes.push(`This is a Foreign Key to \`${to}.${col}\`.<fk table='${to}' column='${col}'/>`);
  }
  const comment = access.columnDescriptions[column.name] ?? null;
  const description =
    notes.length > 1 ? `${comment === null ? '' : `${comment}\n\n`}${notes.join('\n')}` : comment;
  const labels = access.columnEnums[column.name];
  return compact({
    default: parseDefault(type, column.defaultExpression),
    description: description ?? undefined,
    enum: labels && labels.length > 0 ? labels : undefined,
    format: swaggerFormat(type),
    maxLength: maxLength(column.type),
    type: swaggerType(type),
    items: arrayItems(type),
  });
}

function definition(schema: Schema, table: Table, access: RelationAccess): JsonObject {
  const columns = [...table.columns.values()];
  const required = columns.filter((c) => !c.nullable).map((c) => c.name);
  return compact({
    description: access.description ?? undefined,
    properties: Object.fromEntries(columns.map((c) => [c.name, property(schema, table, access, c.name)])),
    required: required.length > 0 ? required : undefined,
    type: 'object',
  });
}

const ref = (name: string) => ({ $ref: `#/parameters/${name}` });

function tablePath(table: Table, access: RelationAccess): JsonObject {
  const rowFilters = [...table.columns.keys()].map((c) => ref(`rowFilter.${table.name}.${c}`));
  const base = compact({ tags: [table.name], ...splitDescription(access.description) });
  const body = ref(`body.${table.name}`);
  return compact({
    get: access.select
      ? {
          ...base,
          parameters: [
            ...rowFilters,
            ...['select', 'order', 'range', 'rangeUnit', 'offset', 'limit', 'preferCount'].map(ref),
          ],
          responses: {
            '200': {
              description: 'OK',
              schema: { items: { $ref: `#/definitions/${table.name}` }, type: 'array' },
            },
            '206': { description: 'Partial Content' },
          },
        }
      : undefined,
    post: access.insert
      ? {
          ...base,
          parameters: [body, ref('select'), ref('preferPost')],
          responses: { '201': { description: 'Created' } },
        }
      : undefined,
    delete: access.delete
      ? {
          ...base,
          parameters: [...rowFilters, ref('preferReturn')],
          responses: { '204': { description: 'No Content' } },
        }
      : undefined,
    patch: access.update
      ? {
          ...base,
          parameters: [...rowFilters, body, ref('preferReturn')],
          responses: { '204': { description: 'No Content' } },
        }
      : undefined,
  });
}

function argumentSchema(type: string): JsonObject {
  const base = baseType(type).replace(/^[^.]+\./, '');
  return compact({ format: swaggerFormat(base), type: swaggerType(base), items: arrayItems(base) });
}

function functionPath(fn: DbFunction, access: FunctionAccess): JsonObject {
  const args = fn.args.filter((a) => a.name !== '');
  const required = args.filter((a) => !a.hasDefault).map((a) => a.name);
  const base = {
    ...splitDescription(access.description),
    tags: [`(rpc) ${fn.name}`],
    produces: OBJECT_MEDIA,
    responses: { '200': { description: 'OK' } },
  };
  const post = {
    ...base,
    parameters: [
      {
        in: 'body',
        name: 'args',
        required: true,
        schema: compact({
          description: access.description ?? undefined,
          properties: Object.fromEntries(args.map((a) => [a.name, argumentSchema(a.type)])),
          required: required.length > 0 ? required : undefined,
          type: 'object',
        }),
      },
      ref('preferParams'),
    ],
  };
  // Query parameters are text: an array is written {a,b}, so its type there is a string.
  const get = {
    ...base,
    parameters: args.map((a) => {
      const schema = argumentSchema(a.type);
      return {
        format: schema.format,
        in: 'query',
        name: a.name,
        required: !a.hasDefault,
        type: schema.type === undefined || schema.type === 'array' ? 'string' : schema.type,
      };
    }),
  };
  return fn.volatile ? { post } : { get, post };
}

function prefer(values: string[]): JsonObject {
  return {
    name: 'Prefer',
    description: 'Preference',
    required: false,
    enum: values,
    in: 'header',
    type: 'string',
  };
}

function simpleParameter(name: string, description: string, where: 'query' | 'header'): JsonObject {
  return { name, description, required: false, in: where, type: 'string' };
}

function parameters(tables: Table[], access: Map<string, RelationAccess>): JsonObject {
  const returns = ['return=representation', 'return=minimal', 'return=none'];
  const result: JsonObject = {
    preferParams: prefer(['params=single-object']),
    preferReturn: prefer(returns),
    preferCount: prefer(['count=none']),
    preferPost: prefer([...returns, 'resolution=ignore-duplicates', 'resolution=merge-duplicates']),
    select: simpleParameter('select', 'Filtering Columns', 'query'),
    on_conflict: simpleParameter('on_conflict', 'On Conflict', 'query'),
    order: simpleParameter('order', 'Ordering', 'query'),
    range: simpleParameter('Range', 'Limiting and Pagination', 'header'),
    rangeUnit: { ...simpleParameter('Range-Unit', 'Limiting and Pagination', 'header'), default: 'items' },
    offset: simpleParameter('offset', 'Limiting and Pagination', 'query'),
    limit: simpleParameter('limit', 'Limiting and Pagination', 'query'),
  };
  for (const table of tables) {
    result[`body.${table.name}`] = {
      name: table.name,
      description: table.name,
      required: false,
      in: 'body',
      schema: { $ref: `#/definitions/${table.name}` },
    };
    const comments = access.get(table.name)!.columnDescriptions;
    for (const column of table.columns.keys()) {
      result[`rowFilter.${table.name}.${column}`] = compact({
        name: column,
        description: comments[column],
        required: false,
        in: 'query',
        type: 'string',
      });
    }
  }
  return result;
}

export interface OpenApiInput {
  schema: Schema;
  /** the exposed schema this document describes */
  schemaName: string;
  access: SchemaAccess;
  /** the service's public base URL (APP_URL) */
  baseUrl: string;
}

/** The Swagger 2.0 document of one exposed schema, as the caller's role sees it. */
export function openApiDocument({ schema, schemaName, access, baseUrl }: OpenApiInput): JsonObject {
  const accessByName = new Map(access.relations.map((r) => [r.name, r]));
  const tables = [...schema.tables.values()]
    .filter((t) => accessByName.has(t.name))
    .sort((a, b) => a.name.localeCompare(b.name));

  const paths: JsonObject = {
    '/': {
      get: {
        tags: ['Introspection'],
        summary: 'OpenAPI description (this document)',
        produces: [OPENAPI_MEDIA_TYPE, 'application/json'],
        responses: { '200': { description: 'OK' } },
      },
    },
  };
  for (const table of tables) paths[`/${table.name}`] = tablePath(table, accessByName.get(table.name)!);
  // Overloads share a path; like PostgREST, one of them describes it (the first callable one).
  for (const fnAccess of access.functions) {
    if (paths[`/rpc/${fnAccess.name}`]) continue;
    const fn = schema.functions
      .get(fnAccess.name)
      ?.find((f) => f.args.map((a) => a.type).join(',') === fnAccess.argTypes.join(','));
    if (fn) paths[`/rpc/${fn.name}`] = functionPath(fn, fnAccess);
  }

  const url = new URL(baseUrl);
  const info = splitDescription(access.description);
  return {
    swagger: '2.0',
    info: {
      description: info.description ?? `The data API of the \`${schemaName}\` schema`,
      title: info.summary ?? 'Tenantry data API',
      version: '12.2.0',
    },
    host: url.host,
    basePath: `${url.pathname.replace(/\/+$/, '')}/rest/v1/`,
    schemes: [url.protocol.replace(':', '')],
    consumes: ALL_MEDIA,
    produces: ALL_MEDIA,
    paths,
    definitions: Object.fromEntries(
      tables.map((t) => [t.name, definition(schema, t, accessByName.get(t.name)!)]),
    ),
    parameters: parameters(tables, accessByName),
    externalDocs: {
      description: 'PostgREST Documentation',
      url: 'https://postgrest.org/en/v12/references/api.html',
    },
  };
}
