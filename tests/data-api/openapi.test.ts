// GET /rest/v1/ on the library schema: a Swagger 2.0 document in PostgREST's shape, with column
// types, formats, defaults and comments, and only the tables, verbs and functions the caller's
// role may use; row-level security and the rows themselves play no part.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startLibrary, type Library, type User } from './library.js';

const EXTRA_SQL = `
comment on schema public is 'Library API
Books, authors and what readers think of them';
comment on table public.authors is 'People who write books';
comment on column public.authors.name is 'Full name, as printed on the cover';
comment on table public.reviews is 'Reviews
What readers think, one per reader and book';
create type public.shelf as enum ('to_read', 'reading', 'done');
create table public.shelves (
  id integer generated always as identity primary key,
  book_id bigint not null references public.books(id),
  state public.shelf not null default 'to_read',
  label character varying(40) default 'mine'::character varying,
  code character(3),
  ratio double precision default 0.5,
  notes jsonb,
  counts integer[],
  docs json[]
);
grant select on public.shelves to anon, authenticated;
create view public.book_titles as select id, title from public.books;
grant select on public.book_titles to anon, authenticated;
comment on function public.add(integer, integer) is 'Adds two numbers';
create function public.staff_only() returns integer language sql stable as $$ select 1 $$;
revoke execute on function public.staff_only() from public;
grant execute on function public.staff_only() to service_role;
`;

type Doc = {
  swagger: string;
  info: { title: string; description: string; version: string };
  host: string;
  basePath: string;
  schemes: string[];
  paths: Record<string, Record<string, Record<string, unknown>>>;
  definitions: Record<string, { properties: Record<string, Record<string, unknown>>; required?: string[] }>;
  parameters: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
};

let lib: Library;
let user: User;

async function describeAs(init: { token?: string; headers?: Record<string, string> } = {}) {
  const res = await lib.rest('/', init);
  expect(res.status, res.text).toBe(200);
  return { doc: res.json as Doc, headers: res.headers };
}

beforeAll(async () => {
  lib = await startLibrary(EXTRA_SQL);
  user = await lib.signUp('describer');
});
afterAll(async () => lib?.close());

describe('the document', () => {
  test('is Swagger 2.0 as application/openapi+json, titled from the schema comment', async () => {
    const { doc, headers } = await describeAs();
    expect(headers.get('content-type')).toBe('application/openapi+json; charset=utf-8');
    expect(doc.swagger).toBe('2.0');
    expect(doc.info.title).toBe('Library API');
    expect(doc.info.description).toBe('Books, authors and what readers think of them');
    const url = new URL(lib.server.config.appUrl);
    expect(doc.host).toBe(url.host);
    expect(doc.basePath).toBe('/rest/v1/');
    expect(doc.produces).toContain('application/json');
    expect(doc.paths['/']!.get!.tags).toEqual(['Introspection']);
  });

  test('every $ref points at a definition or parameter in the document', async () => {
    const { doc } = await describeAs({ token: user.token });
    const refs: string[] = [];
    const walk = (value: unknown) => {
      if (Array.isArray(value)) value.forEach(walk);
      else if (value && typeof value === 'object') {
        for (const [k, v] of Object.entries(value)) {
          if (k === '$ref' && typeof v === 'string') refs.push(v);
          else walk(v);
        }
      }
    };
    walk(doc);
    expect(refs.length).toBeGreaterThan(50);
    for (const r of refs) {
      const [, section, name] = /^#\/(definitions|parameters)\/(.+)$/.exec(r) ?? [];
      expect(section, r).toBeDefined();
      expect((doc[section!] as Record<string, unknown>)[name!], r).toBeDefined();
    }
  });

  test('HEAD answers the headers only; Accept without JSON is 406 PGRST107, a schema not exposed 406 PGRST106; /rest/v1 works too', async () => {
    const head = await lib.rest('/', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('content-type')).toBe('application/openapi+json; charset=utf-8');
    for (const accept of ['application/openapi+json', 'application/json', '*/*']) {
      expect((await lib.rest('/', { headers: { accept } })).status, accept).toBe(200);
    }
    const internal = await lib.rest('/', { headers: { 'accept-profile': 'private' } });
    expect(internal.status).toBe(406);
    expect(internal.json).toMatchObject({ code: 'PGRST106' });
    expect(internal.text).not.toContain('hidden');
    const refused = await lib.rest('/', { headers: { accept: 'text/csv' } });
    expect(refused.status).toBe(406);
    expect(refused.json).toMatchObject({ code: 'PGRST107' });
    const bare = await fetch(`${lib.server.url}/rest/v1`, {
      headers: { apikey: lib.server.config.projectApiKey },
    });
    expect(bare.status).toBe(200);
    expect(((await bare.json()) as Doc).swagger).toBe('2.0');
  });

  test('needs the project key, and a bad token is refused as on every data-API path', async () => {
    const noKey = await fetch(`${lib.server.url}/rest/v1/`);
    expect(noKey.status).toBe(401);
    const bad = await lib.rest('/', { token: 'not-a-token' });
    expect(bad.status).toBe(401);
    expect(bad.json).toMatchObject({ code: 'PGRST301' });
  });
});

describe('definitions', () => {
  test('columns carry PostgREST types, formats, defaults, keys and comments', async () => {
    const { doc } = await describeAs();
    const authors = doc.definitions.authors!;
    expect(doc.definitions.authors).toMatchObject({ description: 'People who write books', type: 'object' });
    expect(authors.required).toEqual(['id', 'name']);
    expect(authors.properties.id).toEqual({
      description: 'Note:\nThis is a Primary Key.<pk/>',
      format: 'int64',
      type: 'integer',
    });
    expect(authors.properties.name).toEqual({
      description: 'Full name, as printed on the cover',
      format: 'text',
      type: 'string',
    });
    expect(authors.properties.born).toEqual({ format: 'int32', type: 'integer' });
    const books = doc.definitions.books!.properties;
    expect(books.author_id).toEqual({
      description: "Note:\nThis is a Foreign Key to `authors.id`.<fk table='authors' column='id'/>",
      format: 'int64',
      type: 'integer',
    });
    expect(books.published).toEqual({ default: true, format: 'boolean', type: 'boolean' });
    expect(books.price).toEqual({ format: 'numeric', type: 'number' });
    expect(books.tags).toEqual({ format: 'text[]', type: 'array', items: { type: 'string' } });
    expect(books.meta).toEqual({ format: 'jsonb' });
    expect(books.created_at).toEqual({
      default: 'now()',
      format: 'timestamp with time zone',
      type: 'string',
    });
    const shelves = doc.definitions.shelves!.properties;
    expect(shelves.state).toEqual({
      default: 'to_read',
      enum: ['to_read', 'reading', 'done'],
      format: 'shelf',
      type: 'string',
    });
    expect(shelves.label).toEqual({
      default: 'mine',
      format: 'character varying',
      maxLength: 40,
      type: 'string',
    });
    expect(shelves.code).toEqual({ format: 'character', maxLength: 3, type: 'string' });
    expect(shelves.ratio).toEqual({ default: 0.5, format: 'double precision', type: 'number' });
    expect(shelves.counts).toEqual({ format: 'integer[]', type: 'array', items: { type: 'integer' } });
    expect(shelves.docs).toEqual({ format: 'json[]', type: 'array', items: {} });
    // Views are described too; their columns are nullable, so nothing is required.
    expect(doc.definitions.book_titles).toEqual({
      properties: { id: { format: 'int64', type: 'integer' }, title: { format: 'text', type: 'string' } },
      type: 'object',
    });
  });

  test('parameters: PostgREST names, a row filter per column and a body per table', async () => {
    const { doc } = await describeAs();
    expect(doc.parameters.select).toEqual({
      name: 'select',
      description: 'Filtering Columns',
      required: false,
      in: 'query',
      type: 'string',
    });
    expect(doc.parameters.rangeUnit).toMatchObject({ name: 'Range-Unit', in: 'header', default: 'items' });
    expect(doc.parameters.preferPost!.enum).toEqual([
      'return=representation',
      'return=minimal',
      'return=none',
      'resolution=ignore-duplicates',
      'resolution=merge-duplicates',
    ]);
    expect(doc.parameters['rowFilter.authors.name']).toEqual({
      name: 'name',
      description: 'Full name, as printed on the cover',
      required: false,
      in: 'query',
      type: 'string',
    });
    expect(doc.parameters['body.authors']).toEqual({
      name: 'authors',
      description: 'authors',
      required: false,
      in: 'body',
      schema: { $ref: '#/definitions/authors' },
    });
  });
});

describe('paths follow the caller role’s privileges', () => {
  test('anon: read-only tables answer GET only; an insert-only table POST only; no grants, no path', async () => {
    const { doc } = await describeAs();
    expect(Object.keys(doc.paths['/authors']!)).toEqual(['get']);
    expect(doc.paths['/authors']!.get).toMatchObject({
      tags: ['authors'],
      summary: 'People who write books',
      parameters: expect.arrayContaining([{ $ref: '#/parameters/rowFilter.authors.id' }]),
      responses: {
        '200': { description: 'OK', schema: { items: { $ref: '#/definitions/authors' }, type: 'array' } },
        '206': { description: 'Partial Content' },
      },
    });
    expect(doc.paths['/reviews']!.get).toMatchObject({
      summary: 'Reviews',
      description: 'What readers think, one per reader and book',
    });
    expect(Object.keys(doc.paths['/feedback']!)).toEqual(['post']);
    expect(Object.keys(doc.paths['/staff']!)).toEqual(['get']); // column privileges count
    for (const hidden of ['/notes', '/secrets', '/hidden']) expect(doc.paths[hidden], hidden).toBeUndefined();
    expect(doc.definitions.notes).toBeUndefined();
    expect(doc.parameters['body.notes']).toBeUndefined();
  });

  test('a signed-in user gets the verbs granted to authenticated, whatever the rows say', async () => {
    const { doc } = await describeAs({ token: user.token });
    expect(Object.keys(doc.paths['/notes']!).sort()).toEqual(['delete', 'get', 'patch', 'post']);
    expect(doc.paths['/notes']!.post).toMatchObject({
      parameters: [
        { $ref: '#/parameters/body.notes' },
        { $ref: '#/parameters/select' },
        { $ref: '#/parameters/preferPost' },
      ],
      responses: { '201': { description: 'Created' } },
    });
    expect(doc.paths['/notes']!.patch!.responses).toEqual({ '204': { description: 'No Content' } });
    expect(Object.keys(doc.paths['/staff']!).sort()).toEqual(['get', 'patch', 'post']);
    // A view the role may read but not write through shows GET only.
    expect(Object.keys(doc.paths['/book_titles']!)).toEqual(['get']);
    expect(doc.paths['/secrets']).toBeUndefined();
  });

  test('the service role sees every table', async () => {
    const res = await fetch(`${lib.server.url}/rest/v1/`, {
      headers: {
        apikey: lib.server.config.serviceRoleKey,
        authorization: `Bearer ${lib.server.config.serviceRoleKey}`,
      },
    });
    const doc = (await res.json()) as Doc;
    expect(Object.keys(doc.paths['/secrets']!).sort()).toEqual(['delete', 'get', 'patch', 'post']);
    expect(doc.paths['/rpc/staff_only']).toBeDefined();
  });
});

describe('functions', () => {
  test('stable functions answer GET and POST with their arguments; volatile ones POST only', async () => {
    const { doc } = await describeAs();
    const add = doc.paths['/rpc/add']!;
    expect(add.get).toEqual({
      summary: 'Adds two numbers',
      tags: ['(rpc) add'],
      produces: [
        'application/json',
        'application/vnd.pgrst.object+json;nulls=stripped',
        'application/vnd.pgrst.object+json',
      ],
      responses: { '200': { description: 'OK' } },
      parameters: [
        { format: 'int32', in: 'query', name: 'a', required: true, type: 'integer' },
        { format: 'int32', in: 'query', name: 'b', required: true, type: 'integer' },
      ],
    });
    expect(add.post!.parameters).toEqual([
      {
        in: 'body',
        name: 'args',
        required: true,
        schema: {
          description: 'Adds two numbers',
          properties: { a: { format: 'int32', type: 'integer' }, b: { format: 'int32', type: 'integer' } },
          required: ['a', 'b'],
          type: 'object',
        },
      },
      { $ref: '#/parameters/preferParams' },
    ]);
    const greet = doc.paths['/rpc/greet']!.get!.parameters as { name: string; required: boolean }[];
    expect(greet.map((p) => [p.name, p.required])).toEqual([
      ['name', true],
      ['greeting', false],
    ]);
    expect(doc.paths['/rpc/tag_count']!.get!.parameters).toEqual([
      { format: 'text[]', in: 'query', name: 'tags', required: true, type: 'string' },
    ]);
    expect(Object.keys(doc.paths['/rpc/rename_author']!)).toEqual(['post']);
  });

  test('a function the role may not execute is not described', async () => {
    const { doc } = await describeAs({ token: user.token });
    expect(doc.paths['/rpc/staff_only']).toBeUndefined();
    expect(doc.paths['/rpc/add']).toBeDefined();
  });
});
