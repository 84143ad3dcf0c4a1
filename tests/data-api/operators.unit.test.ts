// Pure tests of the filter grammar and the SQL of operators and JSON paths: quantifiers,
// full-text configurations, or/and trees holding array literals, paths in select, filters and
// order; every value, key and index is a $n parameter and hostile text never reaches the SQL.
import { describe, expect, test } from 'vitest';
import { HttpError } from '../../src/server/http/errors.js';
import { prepare } from '../../src/server/data-api/execute.js';
import { parseFilterParam, parseOrder, parseSelect } from '../../src/server/data-api/grammar.js';
import { parseApiRequest } from '../../src/server/data-api/request.js';
import type { Column, Schema } from '../../src/server/data-api/schema-cache.js';

function column(name: string, type: string): Column {
  return { name, type, nullable: true, hasDefault: false, defaultExpression: null };
}

const schema: Schema = {
  name: 'public',
  tables: new Map([
    [
      'things',
      {
        schema: 'public',
        name: 'things',
        columns: new Map(
          [
            column('id', 'integer'),
            column('name', 'text'),
            column('tags', 'text[]'),
            column('span', 'int4range'),
            column('specs', 'jsonb'),
            column('legacy', 'json'),
            column('search', 'tsvector'),
          ].map((c) => [c.name, c]),
        ),
        primaryKey: ['id'],
        uniqueKeys: [],
        insertable: true,
        rowSecurity: false,
      },
    ],
  ]),
  relationships: [],
  functions: new Map(),
};

const read = (query: string) =>
  prepare(schema, parseApiRequest('GET', '/things', new URLSearchParams(query), new Headers()), undefined)
    .query;

describe('grammar', () => {
  test('quantifiers, languages and JSON paths are parsed into the condition', () => {
    expect(parseFilterParam('name', 'like(any).{a*,b*}')).toMatchObject({
      operator: 'like',
      quantifier: 'any',
      value: '{a*,b*}',
    });
    expect(parseFilterParam('name', 'not.eq(all).{a,b}')).toMatchObject({ negate: true, quantifier: 'all' });
    expect(parseFilterParam('search', 'wfts(english).fat cat')).toMatchObject({
      operator: 'wfts',
      language: 'english',
      value: 'fat cat',
    });
    expect(parseFilterParam('specs->a->>b', 'eq.1')).toMatchObject({
      column: 'specs',
      jsonPath: [
        { arrow: '->', key: 'a' },
        { arrow: '->>', key: 'b' },
      ],
    });
    expect(parseFilterParam('rel.specs->0', 'is.null')).toMatchObject({
      path: ['rel'],
      column: 'specs',
      jsonPath: [{ arrow: '->', index: 0 }],
    });
  });

  test('or/and values may be array literals, quoted values or in lists; not.or nests', () => {
    expect(parseFilterParam('or', '(tags.cs.{a,b},span.adj."[1,5)",id.not.in.(1,2))')).toMatchObject({
      items: [
        { operator: 'cs', value: '{a,b}' },
        { operator: 'adj', value: '[1,5)' },
        { operator: 'in', negate: true, value: ['1', '2'] },
      ],
    });
    expect(
      parseFilterParam('and', '(not.or(id.eq(any).{1,2},specs->>a.fts(simple).x),name.eq.y)'),
    ).toMatchObject({
      kind: 'and',
      items: [
        {
          kind: 'or',
          negate: true,
          items: [
            { operator: 'eq', quantifier: 'any', value: '{1,2}' },
            { column: 'specs', operator: 'fts', language: 'simple', value: 'x' },
          ],
        },
        { column: 'name' },
      ],
    });
    expect(parseFilterParam('rel.not.or', '(id.eq.1)')).toMatchObject({
      kind: 'or',
      negate: true,
      path: ['rel'],
    });
  });

  test('an unknown operator is named in the error, shortened', () => {
    let error: unknown;
    try {
      parseFilterParam('id', `${'x'.repeat(10_000)}.1`);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ status: 400, code: 'PGRST100' });
    expect((error as HttpError).message.length).toBeLessThan(100);
  });

  test('a long or list parses in linear time (the term limit applies after parsing)', () => {
    const body = `(${Array.from({ length: 14_000 }, (_, i) => `a.eq.${i}`).join(',')})`;
    expect(body.length).toBeGreaterThan(90_000);
    const started = performance.now();
    const tree = parseFilterParam('or', body);
    expect(tree).toMatchObject({ kind: 'or' });
    expect(performance.now() - started).toBeLessThan(500);
  });

  test('select and order take paths; a path answers under its last key', () => {
    expect(parseSelect('a:specs->x->>y::int,specs->0')).toEqual([
      {
        type: 'column',
        name: 'specs',
        alias: 'a',
        cast: 'int',
        jsonPath: [
          { arrow: '->', key: 'x' },
          { arrow: '->>', key: 'y' },
        ],
      },
      { type: 'column', name: 'specs', jsonPath: [{ arrow: '->', index: 0 }] },
    ]);
    expect(parseOrder('specs->>age.desc.nullslast,id')).toEqual([
      {
        path: [],
        column: 'specs',
        jsonPath: [{ arrow: '->>', key: 'age' }],
        descending: true,
        nulls: 'last',
      },
      { path: [], column: 'id', descending: false },
    ]);
  });
});

describe('SQL', () => {
  test('array, range and jsonb operators leave the value untyped, as PostgREST does', () => {
    const q = read('tags=cs.{a}&span=nxl.[1,2)&specs=cd.{}&tags=ov.{b}&span=adj.[3,4)&span=not.sl.[0,1)');
    expect(q.text).toContain('t0."tags" @> $1');
    expect(q.text).toContain('t0."span" &> $2');
    expect(q.text).toContain('t0."specs" <@ $3');
    expect(q.text).toContain('t0."tags" && $4');
    expect(q.text).toContain('t0."span" -|- $5');
    expect(q.text).toContain('not (t0."span" << $6)');
  });

  test('quantified patterns are text arrays with * as %; other quantifiers compare to any/all', () => {
    const q = read('name=ilike(all).{a*,*b}&id=gt(any).{1,2}&name=imatch(any).{^a}');
    expect(q.values.slice(0, 3)).toEqual(['{a%,%b}', '{1,2}', '{^a}']);
    expect(q.text).toContain('t0."name"::text ilike all($1::text[])');
    expect(q.text).toContain('t0."id" > any($2)');
    expect(q.text).toContain('t0."name"::text ~* any($3::text[])');
  });

  test('full-text search: a tsvector as is, anything else through to_tsvector, the language a parameter', () => {
    const q = read('search=phfts(english).a b&name=fts.c');
    expect(q.text).toContain('t0."search" @@ phraseto_tsquery($1::regconfig, $2)');
    expect(q.text).toContain('to_tsvector(t0."name") @@ to_tsquery($3)');
    expect(q.values.slice(0, 3)).toEqual(['english', 'a b', 'c']);
  });

  test('JSON path keys and indexes are parameters; a non-JSON column goes through to_jsonb', () => {
    const hostile = "x'; drop table things; select 'x";
    const q = read(
      `select=${encodeURIComponent(`v:specs->>${hostile}`)},legacy->0,name->k&specs->a->>b=eq.1&order=specs->n.desc`,
    );
    expect(q.text).not.toContain('drop');
    // The where clause is written first, then the select list, then the order.
    expect(q.text).toContain('where (t0."specs"->$1::text->>$2::text) = $3');
    expect(q.text).toContain('(t0."specs"->>$4::text) as "v"');
    expect(q.text).toContain('(t0."legacy"->$5::int) as "legacy"');
    expect(q.text).toContain('(to_jsonb(t0."name")->$6::text) as "k"');
    expect(q.text).toContain('order by (t0."specs"->$7::text) desc');
    expect(q.values.slice(0, 7)).toEqual(['a', 'b', '1', hostile, 0, 'k', 'n']);
  });

  test('isdistinct and in on a path use the path type', () => {
    const q = read('specs->>a=in.(x,y)&specs->b=isdistinct.1');
    expect(q.text).toContain('(t0."specs"->>$1::text) = any($2::text[])');
    expect(q.text).toContain('(t0."specs"->$3::text) is distinct from $4');
  });
});
