// Pure tests of planning and SQL building against a hand-made schema: every value is a $n
// parameter, identifiers are quoted only after a schema lookup, hostile names and values never
// reach the SQL text, and unknown names are refused with PostgREST's codes.
import { describe, expect, test } from 'vitest';
import { prepare } from '../../src/server/data-api/execute.js';
import { HttpError } from '../../src/server/http/errors.js';
import { parseApiRequest } from '../../src/server/data-api/request.js';
import type { Column, DbFunction, Schema, Table } from '../../src/server/data-api/schema-cache.js';
import { quoteIdent } from '../../src/server/data-api/sql.js';

function column(name: string, type = 'text', defaultExpression: string | null = null): Column {
  return { name, type, nullable: true, hasDefault: defaultExpression !== null, defaultExpression };
}

function table(name: string, columns: Column[], primaryKey: string[] = ['id']): Table {
  return {
    schema: 'public',
    name,
    columns: new Map(columns.map((c) => [c.name, c])),
    primaryKey,
    uniqueKeys: [],
    insertable: true,
    rowSecurity: false,
  };
}

function fn(name: string, partial: Partial<DbFunction>): DbFunction {
  return {
    schema: 'public',
    name,
    args: [],
    returnType: 'integer',
    returnsSet: false,
    returnColumns: null,
    returnsVoid: false,
    volatile: false,
    singleJsonArgument: false,
    ...partial,
  };
}

const schema: Schema = {
  name: 'public',
  tables: new Map([
    [
      'authors',
      table('authors', [column('id', 'bigint', "nextval('authors_id_seq'::regclass)"), column('name')]),
    ],
    [
      'books',
      table('books', [
        column('id', 'bigint'),
        column('title'),
        column('author_id', 'bigint'),
        column('editor_id', 'bigint'),
        column('pages', 'integer'),
        column('published', 'boolean', 'true'),
        column('a"b'),
      ]),
    ],
    [
      'reviews',
      table('reviews', [column('book_id', 'bigint'), column('stars', 'integer')], ['book_id', 'stars']),
    ],
  ]),
  relationships: [
    {
      constraint: 'books_author_id_fkey',
      table: 'books',
      columns: ['author_id'],
      foreignTable: 'authors',
      foreignColumns: ['id'],
    },
    {
      constraint: 'books_editor_id_fkey',
      table: 'books',
      columns: ['editor_id'],
      foreignTable: 'authors',
      foreignColumns: ['id'],
    },
    {
      constraint: 'reviews_book_id_fkey',
      table: 'reviews',
      columns: ['book_id'],
      foreignTable: 'books',
      foreignColumns: ['id'],
    },
  ],
  functions: new Map([
    [
      'add',
      [
        fn('add', {
          args: [
            { name: 'a', type: 'integer', hasDefault: false },
            { name: 'b', type: 'integer', hasDefault: true },
          ],
        }),
      ],
    ],
    ['bump', [fn('bump', { volatile: true, returnsVoid: true, returnType: 'void' })]],
    [
      'books_by',
      [
        fn('books_by', {
          args: [{ name: 'author', type: 'text', hasDefault: false }],
          returnType: 'books',
          returnsSet: true,
          returnColumns: [
            { name: 'id', type: 'bigint' },
            { name: 'title', type: 'text' },
          ],
        }),
      ],
    ],
  ]),
};

function build(
  method: string,
  path: string,
  query: string,
  options: { headers?: Record<string, string>; body?: unknown; args?: string[] } = {},
) {
  const request = parseApiRequest(
    method,
    path,
    new URLSearchParams(query),
    new Headers(options.headers),
    new Set(options.args),
  );
  return prepare(schema, request, options.body);
}

function refusal(fn: () => unknown): HttpError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    return error as HttpError;
  }
  throw new Error('expected a refusal');
}

describe('quoting', () => {
  test('identifiers are double-quoted with quotes doubled', () => {
    expect(quoteIdent('books')).toBe('"books"');
    expect(quoteIdent('a"b')).toBe('"a""b"');
    expect(quoteIdent('x"; drop table y; --')).toBe('"x""; drop table y; --"');
  });
});

describe('reads', () => {
  test('filter values are parameters, never SQL text', () => {
    const hostile = "1'; drop table books; --";
    const { query } = build(
      'GET',
      '/books',
      `select=title&title=eq.${encodeURIComponent(hostile)}&pages=gt.3`,
    );
    expect(query.text).not.toContain('drop');
    expect(query.values).toEqual([hostile, '3']);
    expect(query.text).toContain('t0."title" = $1');
    expect(query.text).toContain('t0."pages" > $2');
    expect(query.text).toContain('from public."books" t0');
  });

  test('a quoted column name with a quote in it is quoted safely', () => {
    const { query } = build(
      'GET',
      '/books',
      `select=${encodeURIComponent('"a\\"b"')}&${encodeURIComponent('"a\\"b"')}=eq.x`,
    );
    expect(query.text).toContain('t0."a""b" as "a""b"');
    expect(query.text).toContain('t0."a""b" = $1');
  });

  test('like turns * into %, in is one array parameter of the column type, is has no parameter', () => {
    const like = build('GET', '/books', 'title=ilike.*dark*');
    expect(like.query.values).toEqual(['%dark%']);
    expect(like.query.text).toContain('t0."title"::text ilike $1');
    const list = build('GET', '/books', 'pages=in.(1,2,"3")');
    expect(list.query.values).toEqual([['1', '2', '3']]);
    expect(list.query.text).toContain('t0."pages" = any($1::integer[])');
    const empty = build('GET', '/books', 'pages=in.()');
    expect(empty.query.text).toMatch(/where false/);
    const is = build('GET', '/books', 'pages=is.null&published=not.is.true');
    expect(is.query.values).toEqual([]);
    expect(is.query.text).toContain('t0."pages" is null and not (t0."published" is true)');
  });

  test('logic trees become parenthesised boolean expressions', () => {
    const { query } = build(
      'GET',
      '/books',
      'or=(pages.lt.10,and(title.eq.a,pages.gt.5))&not.and=(title.eq.x,pages.eq.1)',
    );
    expect(query.text).toContain('(t0."pages" < $1 or (t0."title" = $2 and t0."pages" > $3))');
    expect(query.text).toContain('not (t0."title" = $4 and t0."pages" = $5)');
  });

  test('order, limit and offset', () => {
    const { query } = build('GET', '/books', 'order=pages.desc.nullslast,title&limit=5&offset=10');
    expect(query.text).toContain('order by t0."pages" desc nulls last, t0."title" asc limit $1 offset $2');
    expect(query.values).toEqual([5, 10]);
  });

  test('the body is built as JSON in Postgres; a count reads the same filters', () => {
    const { query, readOnly, shape } = build('GET', '/books', 'title=eq.x', {
      headers: { prefer: 'count=exact' },
    });
    expect(readOnly).toBe(true);
    expect(shape).toEqual({ kind: 'rows', counted: true });
    expect(query.text).toContain(`coalesce(json_agg(_r), '[]')::text as body`);
    expect(query.text).toContain('(select count(*) from public."books" t0 where t0."title" = $1)');
  });

  test('embeds: to-one as row_to_json, to-many as json_agg, !inner as exists', () => {
    const toOne = build('GET', '/books', 'select=title,author:authors!author_id(name)');
    expect(toOne.query.text).toContain(
      '(select row_to_json(_e) from (select t1."name" as "name" from public."authors" t1 where t1."id" = t0."author_id" limit 1) _e) as "author"',
    );
    const toMany = build(
      'GET',
      '/books',
      'select=title,reviews!inner(stars)&reviews.stars=gt.3&reviews.limit=2',
    );
    expect(toMany.query.text).toContain(
      `coalesce((select json_agg(_e) from (select t1."stars" as "stars" from public."reviews" t1 where t1."book_id" = t0."id" and t1."stars" > $2 limit $3) _e), '[]'::json) as "reviews"`,
    );
    expect(toMany.query.text).toContain(
      'exists (select 1 from public."reviews" _x1 where _x1."book_id" = t0."id" and _x1."stars" > $1)',
    );
  });

  test('casts come from a fixed list', () => {
    expect(build('GET', '/books', 'select=pages::text').query.text).toContain('t0."pages"::text as "pages"');
    const error = refusal(() => build('GET', '/books', 'select=pages::regclass'));
    expect(error).toMatchObject({ status: 400, code: 'PGRST100' });
  });
});

describe('names are checked against the schema', () => {
  test.each([
    ['/nope', '', 404, 'PGRST205'],
    ['/books', 'select=secret', 400, '42703'],
    ['/books', 'secret=eq.1', 400, 'PGRST204'],
    ['/books', 'order=secret', 400, 'PGRST204'],
    ['/books', 'select=*,nope(*)', 400, 'PGRST200'],
    ['/books', 'select=*,authors(*)', 300, 'PGRST201'],
    ['/books', 'select=*,authors!nope(*)', 400, 'PGRST200'],
    ['/books', 'select=*,reviews(secret)', 400, '42703'],
    ['/books', 'reviews.stars=eq.1', 400, 'PGRST108'],
    ['/rpc/nope', '', 404, 'PGRST202'],
  ])('%s?%s → %i %s', (path, query, status, code) => {
    expect(refusal(() => build('GET', path, query))).toMatchObject({ status, code });
  });
});

describe('writes', () => {
  test('insert: one JSON parameter, populated as the table row type', () => {
    const { query, shape } = build('POST', '/books', 'select=title', {
      headers: { prefer: 'return=representation' },
      body: [{ title: "x'); drop table books; --", author_id: 1 }],
    });
    expect(shape).toEqual({ kind: 'write', created: true, merge: false });
    expect(query.values).toEqual([JSON.stringify([{ title: "x'); drop table books; --", author_id: 1 }])]);
    expect(query.text).toContain(
      'insert into public."books" ("title", "author_id") select _p."title", _p."author_id"',
    );
    expect(query.text).toContain('json_populate_record(null::public."books", _x.v)');
    expect(query.text).not.toContain('drop');
  });

  test('writes return only what the response reads: 1 under minimal, the selected columns otherwise', () => {
    const minimal = build('POST', '/books', '', { body: { title: 'a' } });
    expect(minimal.query.text).toContain(' returning 1)');
    const rep = build('PATCH', '/books', 'id=eq.1&select=title,author:authors!author_id(name)', {
      headers: { prefer: 'return=representation' },
      body: { title: 'b' },
    });
    expect(rep.query.text).toContain('returning t0."title", t0."author_id")');
    const del = build('DELETE', '/books', 'id=eq.1');
    expect(del.query.text).toContain('returning 1)');
  });

  test('missing=default: rows lacking a key take the catalog default', () => {
    const { query } = build('POST', '/books', '', {
      headers: { prefer: 'missing=default' },
      body: [{ title: 'a', published: false }, { title: 'b' }],
    });
    expect(query.text).toContain('lateral (select true as d0 where _x.v is not null offset 0) _d');
    expect(query.text).toContain('case when (_x.v::jsonb) ? $3 then _p."published" else _d.d0 end');
    expect(query.values).toContain('published');
  });

  test('upsert: on conflict on the key or the given columns', () => {
    const merge = build('POST', '/books', '', {
      headers: { prefer: 'resolution=merge-duplicates' },
      body: { id: 1, title: 'a' },
    });
    expect(merge.query.text).toContain('on conflict ("id") do update set "title" = excluded."title"');
    const ignore = build('POST', '/reviews', 'on_conflict=book_id', {
      headers: { prefer: 'resolution=ignore-duplicates' },
      body: { book_id: 1, stars: 2 },
    });
    expect(ignore.query.text).toContain('on conflict ("book_id") do nothing');
    expect(
      refusal(() =>
        build('POST', '/books', 'on_conflict=nope', {
          headers: { prefer: 'resolution=merge-duplicates' },
          body: {},
        }),
      ).status,
    ).toBe(400);
  });

  test('update and delete need a filter: 400 "… requires a WHERE clause"', () => {
    expect(refusal(() => build('PATCH', '/books', '', { body: { title: 'x' } }))).toMatchObject({
      status: 400,
      code: '21000',
      message: 'UPDATE requires a WHERE clause',
    });
    expect(refusal(() => build('DELETE', '/books', ''))).toMatchObject({
      status: 400,
      message: 'DELETE requires a WHERE clause',
    });
    const update = build('PATCH', '/books', 'id=eq.1', { body: { title: 'y' } });
    expect(update.query.text).toContain('update public."books" t0 set "title" = _p."title"');
    expect(update.query.text).toContain('where t0."id" = $2');
    expect(update.query.values).toEqual([JSON.stringify({ title: 'y' }), '1']);
    expect(update.readOnly).toBe(false);
  });

  test('bodies naming unknown columns are refused', () => {
    expect(refusal(() => build('POST', '/books', '', { body: { 'title"; drop': 1 } })).code).toBe('PGRST204');
    expect(refusal(() => build('PATCH', '/books', 'id=eq.1', { body: { nope: 1 } })).code).toBe('PGRST204');
  });
});

describe('functions', () => {
  test('named arguments, each a parameter cast to its declared type', () => {
    const { query, shape } = build('POST', '/rpc/add', '', { body: { a: 1, b: '2' } });
    expect(query.text).toBe(
      'select to_json(public."add"("a" := $1::integer, "b" := $2::integer))::text as body',
    );
    expect(query.values).toEqual(['1', '2']);
    expect(shape).toEqual({ kind: 'value', void: false });
  });

  test('a set-returning function is read like a table, once even when counted', () => {
    const { query } = build('GET', '/rpc/books_by', 'author=Lem&title=like.S*', {
      args: ['author'],
      headers: { prefer: 'count=exact' },
    });
    expect(
      query.text.startsWith('with _src as (select * from public."books_by"("author" := $1::text)) '),
    ).toBe(true);
    expect(query.text).toContain('(select count(*) from _src t0 where t0."title"::text like $2)');
    expect(query.values).toEqual(['Lem', 'S%']);
  });

  test('a volatile function over GET is 405; over POST it runs', () => {
    expect(refusal(() => build('GET', '/rpc/bump', ''))).toMatchObject({ status: 405 });
    expect(build('POST', '/rpc/bump', '', { body: {} }).shape).toEqual({ kind: 'value', void: true });
  });

  test('unknown or missing arguments: 404 PGRST202 with the known ones as a hint', () => {
    const error = refusal(() => build('POST', '/rpc/add', '', { body: { c: 1 } }));
    expect(error).toMatchObject({ status: 404, code: 'PGRST202' });
    expect(error.hint).toContain('a, b');
  });
});
