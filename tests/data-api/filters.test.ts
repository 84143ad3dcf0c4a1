// PostgREST's filter operators and JSON paths, through the real supabase-js client (and raw HTTP
// where the client has no method): array, range and jsonb operators, full-text search with a
// configuration, quantified lists, isdistinct, regular expressions, `is`, all under `not.` and in
// nested or/and trees and embedded filters; JSON paths in select, filters and order; and hostile
// operators, paths, languages and values, which are 400 PGRST100 or data, never SQL or a 500.
import type { SupabaseClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startLibrary, type Library } from './library.js';

const GADGETS_SQL = `
create type public.mood as enum ('calm', 'busy');
create table public.gadgets (
  id integer primary key,
  name text not null,
  mood public.mood,
  active boolean,
  tags text[],
  span int4range,
  specs jsonb,
  legacy json,
  blurb text,
  search tsvector
);
create table public.parts (
  id integer primary key,
  gadget_id integer not null references public.gadgets(id),
  label text not null,
  specs jsonb
);
grant select on public.gadgets, public.parts to anon;
grant select, insert, update, delete on public.gadgets, public.parts to authenticated;
insert into public.gadgets values
  (1, 'Kettle', 'calm', true, '{kitchen,steel}', '[1,5)',
   '{"color":"red","size":{"w":10,"h":20},"ports":[{"kind":"usb"},{"kind":"hdmi"}],"age":3,"a.b":"dotted"}',
   '{"a":{"b":"deep"}}', 'the fat cat sat on the mat', to_tsvector('english', 'fat cats')),
  (2, 'Lamp', 'busy', false, '{home}', '[5,10)', '{"color":"blue","size":{"w":5},"age":12}',
   null, 'a lamp for reading', to_tsvector('english', 'bright lamp')),
  (3, 'Radio', 'calm', null, '{kitchen,music}', '[10,20)', '{"color":"red","age":null}',
   '{"a":{"b":"shallow"}}', 'cats and dogs on the radio', to_tsvector('english', 'cat radio')),
  (4, 'Widget, "odd" (x)', null, null, '{}', null, null, null, null, null);
insert into public.parts values
  (10, 1, 'lid', '{"kind":"usb"}'), (11, 1, 'spout', null), (12, 2, 'bulb', '{"kind":"hdmi"}'),
  (13, 3, 'dial', '{"kind":"usb"}');
`;

let lib: Library;
let anon: SupabaseClient;

beforeAll(async () => {
  lib = await startLibrary(GADGETS_SQL);
  anon = lib.server.client();
});
afterAll(async () => lib?.close());

const gadgets = () => anon.from('gadgets').select('id').order('id');
const ids = (result: { data: unknown; error: unknown }) => {
  expect(result.error).toBeNull();
  return (result.data as { id: number }[]).map((r) => r.id);
};
/** GET through raw HTTP, for forms supabase-js has no method for. */
const get = (query: string) => lib.rest(`/gadgets?${query}`);

describe('array, jsonb and range operators', () => {
  test('contains, containedBy and overlaps on arrays', async () => {
    expect(ids(await gadgets().contains('tags', ['kitchen']))).toEqual([1, 3]);
    expect(ids(await gadgets().contains('tags', ['kitchen', 'music']))).toEqual([3]);
    expect(ids(await gadgets().containedBy('tags', ['kitchen', 'steel', 'home']))).toEqual([1, 2, 4]);
    expect(ids(await gadgets().overlaps('tags', ['home', 'music']))).toEqual([2, 3]);
    expect(ids(await gadgets().not('tags', 'cs', '{kitchen}'))).toEqual([2, 4]);
    // Quoted elements may hold commas and escaped quotes; each is still one element.
    const quoted = await get(`select=id&tags=cs.${encodeURIComponent('{"a,b","c\\"d"}')}`);
    expect(quoted.status).toBe(200);
    expect(quoted.json).toEqual([]);
  });

  test('contains and containedBy on jsonb', async () => {
    expect(ids(await gadgets().contains('specs', { color: 'red' }))).toEqual([1, 3]);
    expect(ids(await gadgets().contains('specs', { size: { w: 10 } }))).toEqual([1]);
    expect(ids(await gadgets().containedBy('specs', { color: 'blue', size: { w: 5 }, age: 12 }))).toEqual([
      2,
    ]);
  });

  test('range operators', async () => {
    const spans = () => anon.from('gadgets').select('span').order('id');
    expect((await spans().contains('span', '[2,3)')).data).toEqual([{ span: '[1,5)' }]);
    expect((await spans().containedBy('span', '[0,10)')).data).toEqual([
      { span: '[1,5)' },
      { span: '[5,10)' },
    ]);
    expect((await spans().overlaps('span', '[4,6)')).data).toEqual([{ span: '[1,5)' }, { span: '[5,10)' }]);
    expect((await spans().rangeLt('span', '[5,10)')).data).toEqual([{ span: '[1,5)' }]);
    expect((await spans().rangeGt('span', '[5,10)')).data).toEqual([{ span: '[10,20)' }]);
    expect((await spans().rangeGte('span', '[5,10)')).data).toEqual([
      { span: '[5,10)' },
      { span: '[10,20)' },
    ]);
    expect((await spans().rangeLte('span', '[5,10)')).data).toEqual([{ span: '[1,5)' }, { span: '[5,10)' }]);
    expect((await spans().rangeAdjacent('span', '[5,10)')).data).toEqual([
      { span: '[1,5)' },
      { span: '[10,20)' },
    ]);
    expect((await spans().not('span', 'adj', '[5,10)')).data).toEqual([{ span: '[5,10)' }]);
  });

  test('a value that is not of the column type is a 400 from PostgreSQL, not a 500', async () => {
    const res = await get('span=cs.3');
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: '22P02' });
    const list = await get(`tags=cs.${encodeURIComponent('{unclosed')}`);
    expect(list.status).toBe(400);
    expect(list.json).toMatchObject({ code: '22P02' });
  });
});

describe('full-text search', () => {
  const phrases = () => anon.from('gadgets').select('id').order('id');

  test('on a tsvector column, with each query type and an optional configuration', async () => {
    expect(ids(await phrases().textSearch('search', `'fat' & 'cat'`, { config: 'english' }))).toEqual([1]);
    expect(ids(await phrases().textSearch('search', 'cat'))).toEqual([1, 3]);
    expect(
      ids(await phrases().textSearch('search', 'fat cats', { type: 'plain', config: 'english' })),
    ).toEqual([1]);
    expect(
      ids(await phrases().textSearch('search', 'cat radio', { type: 'phrase', config: 'english' })),
    ).toEqual([3]);
    expect(
      ids(
        await phrases().textSearch('search', '"bright lamp" or radio', {
          type: 'websearch',
          config: 'english',
        }),
      ),
    ).toEqual([2, 3]);
    expect(ids(await phrases().not('search', 'fts', 'cat'))).toEqual([2]);
  });

  test('on a text column, which is turned into a tsvector with the same configuration', async () => {
    expect(ids(await phrases().textSearch('blurb', 'cats', { config: 'english' }))).toEqual([1, 3]);
    expect(ids(await phrases().textSearch('blurb', 'cat & dog', { config: 'english' }))).toEqual([3]);
    // The simple configuration does not stem: "cats" does not match "cat".
    expect(ids(await phrases().textSearch('blurb', 'cat', { config: 'simple' }))).toEqual([1]);
  });

  test('an unknown configuration is a 400, a malformed one a PGRST100', async () => {
    const unknown = await get('search=fts(klingon).cat');
    expect(unknown.status).toBe(400);
    expect(unknown.json).toMatchObject({ code: '42704' });
    for (const language of ["english'); select pg_sleep(1); --", 'english)', 'eng.lish', '']) {
      const res = await get(`search=fts(${encodeURIComponent(language)}).cat`);
      expect(res.status, language).toBe(400);
      expect(res.json, language).toMatchObject({ code: 'PGRST100' });
    }
  });
});

describe('quantified operators, isdistinct, regular expressions and is', () => {
  test('like, ilike, eq, gt with (any) and (all)', async () => {
    expect(ids(await gadgets().likeAnyOf('name', ['K%', '%dio']))).toEqual([1, 3]);
    expect(ids(await gadgets().likeAllOf('name', ['%a%', '%o']))).toEqual([3]);
    expect(ids(await gadgets().ilikeAnyOf('name', ['k*', 'LAMP']))).toEqual([1, 2]);
    expect(ids(await gadgets().ilikeAllOf('name', ['k%', '%E']))).toEqual([1]);
    expect(ids(await gadgets().filter('id', 'eq(any)', '{1,3}'))).toEqual([1, 3]);
    expect(ids(await gadgets().filter('id', 'gt(all)', '{1,2}'))).toEqual([3, 4]);
    expect(ids(await gadgets().filter('mood', 'eq(any)', '{busy}'))).toEqual([2]);
    expect(ids(await gadgets().not('id', 'lte(any)', '{2}'))).toEqual([3, 4]);
    const malformed = await get('id=eq(any).1,2');
    expect(malformed.status).toBe(400);
    expect(malformed.json).toMatchObject({ code: '22P02' });
  });

  test('isdistinct treats null as a value', async () => {
    expect(ids(await gadgets().isDistinct('mood', 'calm'))).toEqual([2, 4]);
    expect(ids(await gadgets().not('mood', 'isdistinct', 'calm'))).toEqual([1, 3]);
  });

  test('match and imatch', async () => {
    expect(ids(await gadgets().regexMatch('name', '^[KL]'))).toEqual([1, 2]);
    expect(ids(await gadgets().regexMatch('name', '^k'))).toEqual([]);
    expect(ids(await gadgets().regexIMatch('name', '^k|O$'))).toEqual([1, 3]);
    expect(ids(await gadgets().not('name', 'match', 'a'))).toEqual([1, 4]);
    expect(ids(await gadgets().filter('name', 'imatch(any)', '{^lamp,^radio}'))).toEqual([2, 3]);
    const bad = await get(`name=match.${encodeURIComponent('(')}`);
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ code: '2201B' });
  });

  test('is with null, not_null, true, false and unknown', async () => {
    expect(ids(await gadgets().is('active', null))).toEqual([3, 4]);
    expect(ids(await gadgets().filter('active', 'is', 'unknown'))).toEqual([3, 4]);
    expect(ids(await gadgets().not('active', 'is', 'unknown'))).toEqual([1, 2]);
    expect(ids(await gadgets().filter('active', 'is', 'not_null'))).toEqual([1, 2]);
    expect(ids(await gadgets().is('active', true))).toEqual([1]);
    expect(ids(await gadgets().not('active', 'is', false))).toEqual([1, 3, 4]);
    expect(ids(await gadgets().filter('mood', 'is', 'NULL'))).toEqual([4]);
  });
});

describe('logic trees and embedded filters', () => {
  test('new operators under not. and inside nested or/and, negated lists too', async () => {
    expect(ids(await gadgets().or('tags.cs.{kitchen,music},span.adj."[1,5)"'))).toEqual([2, 3]);
    expect(
      ids(await gadgets().or('and(or(id.eq(any).{1,2},mood.is.null),tags.ov.{home,steel}),name.match.^R')),
    ).toEqual([1, 2, 3]);
    expect(ids(await gadgets().or('specs->>color.eq.blue,not.and(name.ilike.*e*,id.lt.3)'))).toEqual([
      2, 3, 4,
    ]);
    expect(ids(await gadgets().or('search.fts(english).cats,blurb.plfts.reading'))).toEqual([1, 2, 3]);
    expect(ids(await gadgets().or('mood.isdistinct.calm,specs.cs.{"age":3}'))).toEqual([1, 2, 4]);
    const negated = await get(
      `select=id&order=id&not.or=(${encodeURIComponent('tags.cs.{kitchen},id.in.(4)')})`,
    );
    expect(negated.json).toEqual([{ id: 2 }]);
    const both = await get(
      `select=id&order=id&and=(${encodeURIComponent('or(id.eq.1,id.eq.3),tags.not.cs.{steel}')})`,
    );
    expect(both.json).toEqual([{ id: 3 }]);
    // Spaces around the parts of a tree are allowed, as PostgREST allows them.
    const spaced = await get(
      `select=id&order=id&and=${encodeURIComponent('( and ( id.in.( 1, 2, 3 ) , id.gt.1 ) , or ( id.eq.2 , id.eq.3 ) )')}`,
    );
    expect(spaced.json).toEqual([{ id: 2 }, { id: 3 }]);
  });

  test('match() with a JSON path key, and filter() with any operator', async () => {
    expect(ids(await gadgets().match({ mood: 'calm', 'specs->>color': 'red' }))).toEqual([1, 3]);
    expect(ids(await gadgets().filter('span', 'sr', '[1,5)').filter('tags', 'not.ov', '{music}'))).toEqual([
      2,
    ]);
  });

  test('filters on embedded rows, with referencedTable and JSON paths', async () => {
    const withParts = () => anon.from('gadgets').select('id, parts(label)').order('id').lt('id', 4);
    const eq = await withParts().eq('parts.specs->>kind', 'usb').order('id', { referencedTable: 'parts' });
    expect(eq.data).toEqual([
      { id: 1, parts: [{ label: 'lid' }] },
      { id: 2, parts: [] },
      { id: 3, parts: [{ label: 'dial' }] },
    ]);
    const or = await withParts().or('label.match.^b,specs.cs.{"kind":"usb"}', { referencedTable: 'parts' });
    expect(or.data).toEqual([
      { id: 1, parts: [{ label: 'lid' }] },
      { id: 2, parts: [{ label: 'bulb' }] },
      { id: 3, parts: [{ label: 'dial' }] },
    ]);
    const inner = await anon
      .from('gadgets')
      .select('id, parts!inner(label)')
      .order('id')
      .filter('parts.label', 'like(any)', '{s*,b*}');
    expect(inner.data).toEqual([
      { id: 1, parts: [{ label: 'spout' }] },
      { id: 2, parts: [{ label: 'bulb' }] },
    ]);
  });

  test('writes take the same filters', async () => {
    const user = await lib.signUp('writer');
    const updated = await user.client
      .from('gadgets')
      .update({ active: true })
      .contains('tags', ['music'])
      .eq('specs->>color', 'red')
      .select('id, active');
    expect(updated.error).toBeNull();
    expect(updated.data).toEqual([{ id: 3, active: true }]);
    await lib.admin.query('update public.gadgets set active = null where id = 3');
    const deleted = await user.client
      .from('parts')
      .delete()
      .filter('specs->kind', 'eq', '"hdmi"')
      .select('id');
    expect(deleted.data).toEqual([{ id: 12 }]);
    await lib.admin.query(`insert into public.parts values (12, 2, 'bulb', '{"kind":"hdmi"}')`);
  });
});

describe('JSON paths', () => {
  test('in select: -> keeps JSON, ->> gives text, keys and indexes, named by the last key', async () => {
    const { data, error } = await anon
      .from('gadgets')
      .select(
        'specs->color, text:specs->>color, specs->size->>w, width:specs->size->w::int, specs->ports->0, specs->ports->-1->>kind, legacy->a->>b, name->x',
      )
      .eq('id', 1)
      .single();
    expect(error).toBeNull();
    expect(data).toEqual({
      color: 'red',
      text: 'red',
      w: '10',
      width: 10,
      ports: { kind: 'usb' },
      kind: 'hdmi',
      b: 'deep',
      x: null,
    });
    const quoted = await get(`select=${encodeURIComponent('dotted:specs->"a.b"')}&id=eq.1`);
    expect(quoted.json).toEqual([{ dotted: 'dotted' }]);
  });

  test('in filters, on keys, nested keys and array elements', async () => {
    expect(ids(await gadgets().eq('specs->>color', 'red'))).toEqual([1, 3]);
    expect(ids(await gadgets().gt('specs->size->w', 6))).toEqual([1]);
    expect(ids(await gadgets().eq('specs->ports->0->>kind', 'usb'))).toEqual([1]);
    expect(ids(await gadgets().eq('specs->ports->-1->>kind', 'hdmi'))).toEqual([1]);
    expect(ids(await gadgets().is('specs->>age', null))).toEqual([3, 4]);
    expect(ids(await gadgets().in('specs->>color', ['blue', 'green']))).toEqual([2]);
    expect(ids(await gadgets().ilike('legacy->a->>b', 'S*'))).toEqual([3]);
    expect(ids(await gadgets().contains('specs->size', { w: 5 }))).toEqual([2]);
  });

  test('in order, with direction and nulls', async () => {
    const desc = await anon
      .from('gadgets')
      .select('id')
      .order('specs->age', { ascending: false, nullsFirst: false });
    expect(ids(desc)).toEqual([2, 1, 3, 4]);
    const byColor = await get('select=id&order=specs->>color.desc.nullslast,id.desc');
    expect(byColor.json).toEqual([{ id: 3 }, { id: 1 }, { id: 2 }, { id: 4 }]);
    const embedded = await anon
      .from('gadgets')
      .select('id, parts(id)')
      .eq('id', 1)
      .order('specs->>kind', { referencedTable: 'parts', nullsFirst: true });
    expect(embedded.data).toEqual([{ id: 1, parts: [{ id: 11 }, { id: 10 }] }]);
  });
});

describe('hostile input', () => {
  test.each([
    ['unknown operator', 'id=eqq.1'],
    ['operator with SQL', `id=${encodeURIComponent('eq;drop table gadgets.1')}`],
    ['quantifier that is not any or all', 'id=eq(some).{1}'],
    ['modifier on an operator without one', 'tags=cs(any).{a}'],
    ['quantifier on is', 'active=is(any).null'],
    ['unknown is value', 'active=is.maybe'],
    ['empty path step', 'select=specs->'],
    ['dangling arrow in a filter', 'specs->>=eq.1'],
    ['dangling arrow after a key', 'specs->a->=eq.1'],
    ['reserved character in a key', `select=${encodeURIComponent('specs->a,b)')}`],
    ['malformed path in order', 'order=specs->.desc'],
    ['malformed path in a logic tree', `or=(${encodeURIComponent('specs->.eq.1,id.eq.1')})`],
    ['SQL in a key', `select=${encodeURIComponent("specs->a'||pg_sleep(1)||'")}`],
    ['column name with a path-like suffix', 'specs-->a=eq.1'],
    ['unterminated quoted key', `select=${encodeURIComponent('specs->"a')}`],
    ['badly formed negative index', 'select=specs->>--34'],
    ['path too long', `select=specs${'->a'.repeat(17)}`],
    ['unbalanced braces in a logic value', `or=(${encodeURIComponent('tags.cs.{a,id.eq.1')})`],
  ])('%s: 400 PGRST100', async (_label, query) => {
    const res = await get(query);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: 'PGRST100' });
    expect(res.text).not.toMatch(/select |syntax error/i);
  });

  test('values, list items, keys and patterns are data, never SQL', async () => {
    const injection = "x'); drop table public.gadgets; --";
    expect(ids(await gadgets().contains('tags', [injection]))).toEqual([]);
    expect(ids(await gadgets().likeAnyOf('name', [injection, '%']))).toEqual([1, 2, 3, 4]);
    expect(ids(await gadgets().eq(`specs->>${"x';drop table gadgets;select '"}`, injection))).toEqual([]);
    expect(ids(await gadgets().textSearch('blurb', injection, { type: 'websearch' }))).toEqual([]);
    expect(ids(await gadgets().regexMatch('name', "x' or '1'='1"))).toEqual([]);
    const regex = await gadgets().regexMatch('name', injection);
    expect(regex.error).toMatchObject({ code: '2201B' });
    expect(ids(await gadgets().isDistinct('name', injection))).toEqual([1, 2, 3, 4]);
    const selected = await get(`select=${encodeURIComponent("v:specs->>x' or '1'='1")}&id=eq.1`);
    expect(selected.json).toEqual([{ v: null }]);
    const count = await lib.admin.query('select count(*)::int as n from public.gadgets');
    expect(count.rows[0]).toEqual({ n: 4 });
  });

  test('a NUL in a JSON key is refused, not a 500', async () => {
    const res = await get('select=specs->a%00b&id=eq.1');
    expect(res.status).toBe(400);
  });

  test('regular expressions count against the pattern limit', async () => {
    const res = await get(`name=match.${'a'.repeat(300)}`);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: 'PGRST100' });
    expect((res.json as { message: string }).message).toMatch(/limit is 256/);
  });
});
