// How /rpc chooses and calls a function, through supabase-js and raw HTTP: overloads told apart
// by argument names (PGRST203 when they cannot be), one unnamed json/text/xml/bytea parameter
// taking the body, row-type arguments, select and filters on a function returning one row,
// repeated GET arguments as arrays, and hostile argument names that never reach SQL.
import type { SupabaseClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startLibrary, type Library } from './library.js';

const FUNCTIONS_SQL = `
create function public.pick(a text) returns integer language sql immutable as $$ select 1 $$;
create function public.pick(a integer) returns text language sql immutable as $$ select 'int' $$;
create function public.pick(b bigint) returns text language sql immutable as $$ select 'by b' $$;
create function public.pick() returns text language sql immutable as $$ select 'none' $$;
create function public.shout(text) returns text language sql immutable as $$ select upper($1) $$;
create function public.byte_count(bytea) returns integer language sql immutable as $$ select length($1) $$;
create function public.xml_text(xml) returns text language sql immutable as $$ select $1::text $$;
create function public.twice(integer) returns integer language sql immutable as $$ select $1 * 2 $$;
create function public.title_of(book public.books) returns text language sql immutable as $$ select book.title $$;
create function public.pages_of(book public.books, extra integer default 0) returns integer
  language sql immutable as $$ select book.pages + extra $$;
`;

let lib: Library;
let anon: SupabaseClient;
let bookId: number;

beforeAll(async () => {
  lib = await startLibrary(FUNCTIONS_SQL);
  anon = lib.server.client();
  const a = await lib.admin.query<{ id: string }>(
    `insert into public.authors (name) values ('Lem') returning id`,
  );
  const b = await lib.admin.query<{ id: string }>(
    `insert into public.books (title, author_id, pages, tags) values ('Solaris', $1, 204, '{sf,classic}') returning id`,
    [a.rows[0]!.id],
  );
  bookId = Number(b.rows[0]!.id);
});
afterAll(async () => lib?.close());

describe('overloads', () => {
  test('argument names choose the overload; no arguments choose the one without', async () => {
    expect(await anon.rpc('pick', { b: 1 })).toMatchObject({ status: 200, data: 'by b' });
    expect(await anon.rpc('pick')).toMatchObject({ status: 200, data: 'none' });
    expect(await anon.rpc('pick', { b: 1 }, { get: true })).toMatchObject({ status: 200, data: 'by b' });
  });

  test('the same names with other types cannot be told apart: 300 PGRST203 listing them', async () => {
    const res = await anon.rpc('pick', { a: 'x' });
    expect(res.status).toBe(300);
    expect(res.error).toEqual({
      code: 'PGRST203',
      details: null,
      hint: 'Try renaming the parameters or the function itself in the database so function overloading can be resolved',
      message:
        'Could not choose the best candidate function between: public.pick(a => integer), public.pick(a => text)',
    });
  });

  test('unknown names: 404 PGRST202 saying what was searched for, with the nearest function as a hint', async () => {
    const res = await anon.rpc('pick', { c: 1, d: 2 });
    expect(res.status).toBe(404);
    expect(res.error).toMatchObject({
      code: 'PGRST202',
      message: 'Could not find the function public.pick(c, d) in the schema cache',
      details:
        'Searched for the function public.pick with parameters c, d or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
      hint: expect.stringContaining('Perhaps you meant to call the function public.pick('),
    });
    const typo = await anon.rpc('shoutt');
    expect(typo.error).toMatchObject({
      code: 'PGRST202',
      message: 'Could not find the function public.shoutt without parameters in the schema cache',
      hint: 'Perhaps you meant to call the function public.shout',
    });
  });

  test('hostile argument names are PGRST202, never SQL', async () => {
    for (const name of ['a"); drop table public.books; --', '', '"', 'a\\', 'ä ö', '$1']) {
      const res = await lib.rest('/rpc/add', { method: 'POST', body: JSON.stringify({ [name]: 1, b: 2 }) });
      expect(res.status).toBe(404);
      expect(res.json).toMatchObject({ code: 'PGRST202' });
    }
    // An unnamed integer parameter cannot be named: no "zero-length delimited identifier" error.
    const unnamed = await lib.rest('/rpc/twice', { method: 'POST', body: '{"": 2}' });
    expect(unnamed.status).toBe(404);
    expect(unnamed.json).toMatchObject({ code: 'PGRST202' });
    const get = await lib.rest('/rpc/twice?=2');
    expect(get.status).toBeLessThan(500);
    expect(await lib.admin.query('select count(*) from public.books')).toMatchObject({
      rows: [{ count: '1' }],
    });
  });
});

describe('one unnamed parameter', () => {
  test('text/plain, text/xml and application/octet-stream bodies go to text, xml and bytea', async () => {
    const text = await lib.rest('/rpc/shout', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: "it's {not} json",
    });
    expect(text).toMatchObject({ status: 200, json: "IT'S {NOT} JSON" });
    const xml = await lib.rest('/rpc/xml_text', {
      method: 'POST',
      headers: { 'content-type': 'text/xml' },
      body: '<a>b</a>',
    });
    expect(xml.json).toBe('<a>b</a>');
    const bytes = await lib.rest('/rpc/byte_count', {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: '\u0000\u0001\\x',
    });
    expect(bytes.json).toBe(4);
    // A text body for a function without a text parameter finds nothing.
    const none = await lib.rest('/rpc/add', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(none.status).toBe(404);
    expect(none.json).toMatchObject({
      code: 'PGRST202',
      details:
        'Searched for the function public.add with a single unnamed text parameter, but no matches were found in the schema cache.',
    });
  });

  test('an unnamed text parameter is also named by the empty key', async () => {
    expect(await anon.rpc('shout', { '': 'quiet' })).toMatchObject({ status: 200, data: 'QUIET' });
  });
});

describe('rows in and out', () => {
  test('a row-type argument is filled from its JSON object, other arguments alongside', async () => {
    const res = await anon.rpc('title_of', { book: { id: 1, title: 'Any "title"', author_id: 1 } });
    expect(res).toMatchObject({ status: 200, data: 'Any "title"' });
    const pages = await anon.rpc('pages_of', { book: { title: 'x', pages: 10 }, extra: 5 });
    expect(pages.data).toBe(15);
    const bad = await anon.rpc('title_of', { book: 'not an object' });
    expect(bad.status).toBe(400);
    const typed = await anon.rpc('pages_of', { book: { pages: 'many' } });
    expect(typed.status).toBe(400);
    expect(typed.error?.code).toBe('22P02');
  });

  test('a function returning one row takes select and filters; filtered out it is null', async () => {
    const selected = await anon.rpc('book_summary', { book_id: bookId }).select('title, pages');
    expect(selected).toMatchObject({ status: 200, data: { title: 'Solaris', pages: 204 } });
    const kept = await anon.rpc('book_summary', { book_id: bookId }).select('title').gt('pages', 200);
    expect(kept.data).toEqual({ title: 'Solaris' });
    const dropped = await anon.rpc('book_summary', { book_id: bookId }).select('title').gt('pages', 300);
    expect(dropped).toMatchObject({ status: 200, data: null, error: null });
  });

  test('GET with a repeated argument passes an array', async () => {
    const res = await lib.rest('/rpc/tag_count?tags=a&tags=b&tags=c');
    expect(res).toMatchObject({ status: 200, json: 3 });
    const braces = await anon.rpc('tag_count', { tags: ['x', 'y'] }, { get: true });
    expect(braces.data).toBe(2);
  });
});
