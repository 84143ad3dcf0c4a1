// Pure tests of request parsing: PostgREST's select/filter/order grammar, quoting, Prefer,
// Accept, Range and profiles, and the refusals (always an HttpError with a 4xx status).
import { describe, expect, test } from 'vitest';
import { HttpError } from '../../src/server/http/errors.js';
import {
  parseFilterParam,
  parseOrder,
  parseSelect,
  splitTopLevel,
} from '../../src/server/data-api/grammar.js';
import { parseApiRequest, parsePrefer, splitPath } from '../../src/server/data-api/request.js';

function parse(query: string, headers: Record<string, string> = {}, method = 'GET', path = '/books') {
  return parseApiRequest(method, path, new URLSearchParams(query), new Headers(headers));
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

describe('select', () => {
  test('default is *', () => {
    expect(parseSelect(undefined)).toEqual([{ type: 'star' }]);
    expect(parseSelect('')).toEqual([{ type: 'star' }]);
  });

  test('columns, aliases and casts', () => {
    expect(parseSelect('id, heading:title,pages::text,n:pages::TEXT')).toEqual([
      { type: 'column', name: 'id' },
      { type: 'column', name: 'title', alias: 'heading' },
      { type: 'column', name: 'pages', cast: 'text' },
      { type: 'column', name: 'pages', alias: 'n', cast: 'text' },
    ]);
  });

  test('quoted names keep reserved characters; \\" and \\\\ are escapes', () => {
    expect(parseSelect('"a,b","c\\"d","e:f":g')).toEqual([
      { type: 'column', name: 'a,b' },
      { type: 'column', name: 'c"d' },
      { type: 'column', name: 'g', alias: 'e:f' },
    ]);
  });

  test('embeds with alias, hint, inner and nesting', () => {
    expect(parseSelect('title,author:authors!author_id!inner(name,books(title)),reviews(*)')).toEqual([
      { type: 'column', name: 'title' },
      {
        type: 'embed',
        relation: 'authors',
        alias: 'author',
        hint: 'author_id',
        inner: true,
        items: [
          { type: 'column', name: 'name' },
          { type: 'embed', relation: 'books', inner: false, items: [{ type: 'column', name: 'title' }] },
        ],
      },
      { type: 'embed', relation: 'reviews', inner: false, items: [{ type: 'star' }] },
    ]);
  });

  test('an empty embed selects nothing (it only filters)', () => {
    expect(parseSelect('title,reviews!inner()')).toEqual([
      { type: 'column', name: 'title' },
      { type: 'embed', relation: 'reviews', inner: true, items: [] },
    ]);
  });

  test.each([
    ['name,,id', /Empty/],
    ['name;drop table x', /not a valid column/],
    ['(select 1)', /./],
    ['books(title', /parenthes/i],
    ['books(title))', /parenthes/i],
    ['"unterminated', /quote/i],
    ['name::text::int', /cast/i],
    ['meta->', /JSON path/],
    ['meta->a->', /JSON path/],
    ['a!b!c!d(x)', /modifier/],
    // The parser stops runaway nesting; the planner holds embeds to 3 levels once names resolve.
    ['a('.repeat(20) + 'x' + ')'.repeat(20), /levels/],
    ['x'.repeat(64), /not a valid/],
  ])('refuses %s', (input, message) => {
    const error = refusal(() => parseSelect(input));
    expect(error.status).toBe(400);
    expect(error.code).toBe('PGRST100');
    expect(error.message).toMatch(message);
  });
});

describe('filters', () => {
  test('every operator, with not', () => {
    for (const op of ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike']) {
      expect(parseFilterParam('title', `${op}.x`)).toEqual({
        kind: 'condition',
        path: [],
        column: 'title',
        operator: op,
        negate: false,
        value: 'x',
      });
    }
    expect(parseFilterParam('title', 'not.eq.x')).toMatchObject({ operator: 'eq', negate: true, value: 'x' });
    expect(parseFilterParam('pages', 'is.null')).toMatchObject({ operator: 'is', value: 'null' });
    expect(parseFilterParam('pages', 'not.is.not_null')).toMatchObject({ negate: true, value: 'not_null' });
  });

  test('values keep dots, quotes and semicolons verbatim', () => {
    expect(parseFilterParam('title', 'eq.1;drop table x')).toMatchObject({ value: '1;drop table x' });
    expect(parseFilterParam('title', 'eq.a.b.c')).toMatchObject({ value: 'a.b.c' });
    expect(parseFilterParam('title', 'eq."quoted"')).toMatchObject({ value: '"quoted"' });
    expect(parseFilterParam('title', 'eq.')).toMatchObject({ value: '' });
  });

  test('in lists: quoted items may hold commas, parentheses and escaped quotes', () => {
    expect(parseFilterParam('title', 'in.(a,"b,c","d\\"e","(f)", g )')).toMatchObject({
      operator: 'in',
      value: ['a', 'b,c', 'd"e', '(f)', 'g'],
    });
    expect(parseFilterParam('title', 'in.()')).toMatchObject({ value: [] });
  });

  test('embedded columns and quoted column names', () => {
    expect(parseFilterParam('reviews.stars', 'gte.4')).toMatchObject({ path: ['reviews'], column: 'stars' });
    expect(parseFilterParam('"with space"', 'eq.1')).toMatchObject({ path: [], column: 'with space' });
  });

  test('or/and trees, nested and negated, with quoted values', () => {
    expect(
      parseFilterParam('or', '(pages.lt.10,and(title.eq."a,b",price.not.is.null),not.or(x.eq.1))'),
    ).toEqual({
      kind: 'or',
      negate: false,
      path: [],
      items: [
        { kind: 'condition', path: [], column: 'pages', operator: 'lt', negate: false, value: '10' },
        {
          kind: 'and',
          negate: false,
          path: [],
          items: [
            { kind: 'condition', path: [], column: 'title', operator: 'eq', negate: false, value: 'a,b' },
            { kind: 'condition', path: [], column: 'price', operator: 'is', negate: true, value: 'null' },
          ],
        },
        {
          kind: 'or',
          negate: true,
          path: [],
          items: [{ kind: 'condition', path: [], column: 'x', operator: 'eq', negate: false, value: '1' }],
        },
      ],
    });
    expect(parseFilterParam('not.and', '(a.eq.1,b.eq.2)')).toMatchObject({ kind: 'and', negate: true });
    expect(parseFilterParam('reviews.or', '(stars.eq.1,stars.eq.5)')).toMatchObject({
      kind: 'or',
      path: ['reviews'],
    });
    expect(parseFilterParam('or', '(title.in.("a,b",c),pages.eq.1)')).toMatchObject({
      items: [{ operator: 'in', value: ['a,b', 'c'] }, { operator: 'eq' }],
    });
  });

  test.each([
    ['title', 'regex.x', /Unknown operator "regex"/],
    ['title', 'eq', /needs an operator/],
    ['title', 'x', /needs an operator/],
    ['title', 'not.x', /needs an operator/],
    ['title', 'is.maybe', /"is" takes/],
    ['title', 'in.a,b', /parentheses/],
    ['title', 'in.("a,b)', /quote/i],
    ['title', 'cs(any).{a}', /takes no modifier/],
    ['title', 'eq(some).{a}', /\(any\) or \(all\)/],
    ['title', 'fts(a;b).x', /text search configuration/],
    ['or', '(a.eq.{1,b.eq.2)', /braces/],
    ['or', '(a.eq.1', /parenthes/i],
    ['or', 'a.eq.1', /parentheses/],
    ['or', '()', /Malformed|Empty/],
    ['or', '(a)', /Malformed/],
    ['or', '(a.eq.1))', /parenthes/i],
    ['or', `${'(or'.repeat(20)}(a.eq.1)${')'.repeat(20)}`, /./],
    ['na"me', 'eq.1', /not a valid/],
    ['name;drop table x', 'eq.1', /not a valid/],
    ['a.b.c', 'eq.1', /one level/],
    ['title::text', 'eq.1', /not a valid/],
  ])('refuses %s=%s', (key, value, message) => {
    const error = refusal(() => parseFilterParam(key, value));
    expect(error.status).toBe(400);
    expect(error.code).toBe('PGRST100');
    expect(error.message).toMatch(message);
  });
});

describe('order', () => {
  test('terms and modifiers', () => {
    expect(parseOrder('pages.desc.nullslast,title,price.asc.nullsfirst')).toEqual([
      { path: [], column: 'pages', descending: true, nulls: 'last' },
      { path: [], column: 'title', descending: false },
      { path: [], column: 'price', descending: false, nulls: 'first' },
    ]);
  });

  test('rel(col): a column of a to-one embed', () => {
    expect(parseOrder('author(name).desc')).toEqual([
      { path: [], relation: 'author', column: 'name', descending: true },
    ]);
  });

  test.each(['title.sideways', 'title;drop', 'length(title;x)', 'a(b(c))', 'title,', ''])(
    'refuses %j',
    (input) => {
      expect(refusal(() => parseOrder(input)).status).toBe(400);
    },
  );
});

describe('splitTopLevel', () => {
  test('respects parentheses and quotes', () => {
    expect(splitTopLevel('a,b(c,d),"e,f",g')).toEqual(['a', 'b(c,d)', '"e,f"', 'g']);
  });
});

describe('the whole request', () => {
  test('paths: table, rpc, and nothing else', () => {
    expect(splitPath('/books')).toEqual({ kind: 'table', name: 'books' });
    expect(splitPath('/rpc/add')).toEqual({ kind: 'rpc', name: 'add' });
    expect(splitPath('/weird%20name')).toEqual({ kind: 'table', name: 'weird name' });
    expect(refusal(() => splitPath('/')).status).toBe(404);
    expect(refusal(() => splitPath('/a/b')).status).toBe(404);
    expect(refusal(() => splitPath('/%E0%A4%A')).status).toBe(400);
  });

  test('reserved parameters, embedded options and filters', () => {
    const request = parse(
      'select=title,reviews(stars)&title=eq.x&reviews.stars=gt.3&order=title.desc&limit=5&offset=10&reviews.order=stars&reviews.limit=2',
    );
    expect(request.filters).toHaveLength(2);
    expect(request.order).toEqual([{ path: [], column: 'title', descending: true }]);
    expect(request.limit).toBe(5);
    expect(request.offset).toBe(10);
    expect(request.embedOptions.get('reviews')).toEqual({
      order: [{ path: ['reviews'], column: 'stars', descending: false }],
      limit: 2,
    });
  });

  test('columns and on_conflict accept quoted names', () => {
    const request = parse('columns="title","author_id"&on_conflict=isbn', {}, 'POST');
    expect(request.columns).toEqual(['title', 'author_id']);
    expect(request.onConflict).toEqual(['isbn']);
    expect(refusal(() => parse('columns=a;b', {}, 'POST')).status).toBe(400);
  });

  test('Range header: offset and limit; an open range; a bad one is 416', () => {
    expect(parse('', { range: '10-19' })).toMatchObject({ offset: 10, limit: 10 });
    expect(parse('', { range: '5-' })).toMatchObject({ offset: 5 });
    expect(parse('limit=3', { range: '0-9' })).toMatchObject({ offset: 0, limit: 3 });
    expect(refusal(() => parse('', { range: '9-1' })).status).toBe(416);
    expect(refusal(() => parse('', { range: 'bytes=0-1' })).status).toBe(416);
  });

  test('Prefer: known tokens applied, unknown (and tx without the server allowing it) set aside', () => {
    expect(
      parsePrefer(
        'return=representation, count=exact,resolution=merge-duplicates, missing=default, tx=rollback, x',
      ),
    ).toEqual({
      return: 'representation',
      count: 'exact',
      resolution: 'merge-duplicates',
      missing: 'default',
      invalid: ['tx=rollback', 'x'],
      given: {
        return: 'return=representation',
        count: 'count=exact',
        resolution: 'resolution=merge-duplicates',
        missing: 'missing=default',
      },
    });
    expect(parsePrefer(null)).toEqual({ return: 'minimal', missing: 'null', invalid: [], given: {} });
    expect(parsePrefer('tx=rollback', { txOverride: true })).toMatchObject({ tx: 'rollback', invalid: [] });
  });

  test('Prefer: handling=strict refuses what it does not understand (PGRST122); max-affected needs digits', () => {
    const error = refusal(() => parsePrefer('handling=strict, return=everything, max-affected=-1'));
    expect(error).toMatchObject({
      status: 400,
      code: 'PGRST122',
      message: 'Invalid preferences given with handling=strict',
      details: 'Invalid preferences: return=everything, max-affected=-1',
    });
    expect(parsePrefer('handling=strict, max-affected=5')).toMatchObject({
      handling: 'strict',
      maxAffected: 5,
    });
    expect(parsePrefer('timezone=America/Los_Angeles').timezone).toBe('America/Los_Angeles');
    expect(parsePrefer("timezone=UTC';drop table x").timezone).toBeUndefined();
  });

  test('Accept: object, JSON or 406', () => {
    expect(parse('', { accept: 'application/vnd.pgrst.object+json' }).single).toBe(true);
    expect(parse('', { accept: 'application/json, */*;q=0.1' }).single).toBe(false);
    expect(parse('', { accept: 'text/csv' }).media).toEqual({ kind: 'csv' });
    const error = refusal(() => parse('', { accept: 'text/xml' }));
    expect(error).toMatchObject({ status: 406, code: 'PGRST107' });
    // Plans only when the server allows them.
    expect(refusal(() => parse('', { accept: 'application/vnd.pgrst.plan+json' })).code).toBe('PGRST107');
  });

  test('profiles other than public: 406 PGRST106', () => {
    expect(refusal(() => parse('', { 'accept-profile': 'auth' })).code).toBe('PGRST106');
    expect(refusal(() => parse('', { 'content-profile': 'internal' }, 'POST')).code).toBe('PGRST106');
    expect(parse('', { 'accept-profile': 'public' }).target).toEqual({ kind: 'table', name: 'books' });
  });

  test('GET /rpc: parameters named like the arguments are arguments, others are filters', () => {
    const request = parseApiRequest(
      'GET',
      '/rpc/books_by',
      new URLSearchParams('author=Lem&pages=gt.100&select=title'),
      new Headers(),
      new Set(['author']),
    );
    expect(request.rpcQueryArgs).toEqual(new Map([['author', 'Lem']]));
    expect(request.filters).toEqual([
      { kind: 'condition', path: [], column: 'pages', operator: 'gt', negate: false, value: '100' },
    ]);
  });

  test('unsupported methods are 405', () => {
    expect(refusal(() => parse('', {}, 'PUT')).status).toBe(405);
  });

  test('limit and offset must be small non-negative integers', () => {
    for (const q of ['limit=-1', 'limit=1.5', 'limit=abc', 'offset=1e3', 'limit=9999999999']) {
      expect(refusal(() => parse(q)).status, q).toBe(400);
    }
  });
});
