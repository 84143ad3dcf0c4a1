// Functions at /rest/v1/rpc on a schema the test creates itself, through supabase-js: POST with
// named arguments, GET for non-volatile functions, scalar/composite/SETOF/TABLE/void results,
// filters and paging on set results, whole-body json arguments, and the error mappings.
import type { SupabaseClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startLibrary, type Library, type User } from './library.js';

let lib: Library;
let user: User;
let anon: SupabaseClient;
let lemId: number;

beforeAll(async () => {
  lib = await startLibrary();
  user = await lib.signUp('caller');
  anon = lib.server.client();
  const a = await lib.admin.query<{ id: string }>(
    `insert into public.authors (name, owner_id) values ('Stanislaw Lem', $1), ('Ursula K. Le Guin', $1) returning id`,
    [user.id],
  );
  lemId = Number(a.rows[0]!.id);
  await lib.admin.query(
    `insert into public.books (title, author_id, pages, owner_id) values
       ('Solaris', $1, 204, $3), ('The Cyberiad', $1, 295, $3), ('His Master''s Voice', $1, 199, $3),
       ('The Dispossessed', $2, 387, $3)`,
    [lemId, a.rows[1]!.id, user.id],
  );
});
afterAll(async () => lib?.close());

describe('calling', () => {
  test('POST with named arguments; a scalar comes back as bare JSON', async () => {
    const res = await anon.rpc('add', { a: 2, b: 40 });
    expect(res).toMatchObject({ status: 200, data: 42, error: null });
    const raw = await lib.rest('/rpc/add', { method: 'POST', body: '{"a":1,"b":2}' });
    expect(raw.text).toBe('3');
    expect(raw.headers.get('content-type')).toContain('application/json');
  });

  test('arguments with defaults may be left out; text results are JSON strings', async () => {
    expect((await anon.rpc('greet', { name: 'Ann' })).data).toBe('Hello, Ann');
    expect((await anon.rpc('greet', { name: 'Ann', greeting: 'Hi' })).data).toBe('Hi, Ann');
    const raw = await lib.rest('/rpc/greet', { method: 'POST', body: '{"name":"\\"quoted\\""}' });
    expect(raw.json).toBe('Hello, "quoted"');
  });

  test('GET with query arguments for immutable and stable functions', async () => {
    const res = await anon.rpc('add', { a: 5, b: 6 }, { get: true });
    expect(res).toMatchObject({ status: 200, data: 11, error: null });
    const raw = await lib.rest('/rpc/greet?name=Bob&greeting=Yo');
    expect(raw.json).toBe('Yo, Bob');
  });

  test('array arguments, by POST as JSON arrays and by GET as {a,b}', async () => {
    expect((await anon.rpc('tag_count', { tags: ['a', 'b', 'c'] })).data).toBe(3);
    const raw = await lib.rest(`/rpc/tag_count?tags=${encodeURIComponent('{x,y}')}`);
    expect(raw.json).toBe(2);
  });

  test('a single unnamed jsonb parameter receives the whole body', async () => {
    const body = { anything: [1, 'two', { three: true }] };
    const res = await anon.rpc('echo', body);
    expect(res.data).toEqual(body);
  });

  test('functions see the caller: auth.uid() and the role', async () => {
    expect((await user.client.rpc('whoami')).data).toEqual({ uid: user.id, role: 'authenticated' });
    expect((await anon.rpc('whoami')).data).toEqual({ uid: null, role: 'anon' });
  });

  test('a composite result is an object', async () => {
    const [book] = (await lib.admin.query(`select id from public.books where title = 'Solaris'`)).rows;
    const res = await anon.rpc('book_summary', { book_id: book.id });
    expect(res.data).toMatchObject({ id: Number(book.id), title: 'Solaris', pages: 204 });
  });

  test('a void function answers 204 with no body', async () => {
    const res = await user.client.rpc('rename_author', { author_id: lemId, new_name: 'S. Lem' });
    expect(res).toMatchObject({ status: 204, data: null, error: null });
    expect((await lib.admin.query(`select name from public.authors where id = $1`, [lemId])).rows).toEqual([
      { name: 'S. Lem' },
    ]);
    await user.client.rpc('rename_author', { author_id: lemId, new_name: 'Stanislaw Lem' });
  });
});

describe('set-returning functions', () => {
  test('SETOF a table accepts select, filters, order and limit', async () => {
    const res = await anon
      .rpc('books_by', { author: 'Stanislaw Lem' })
      .select('title, pages')
      .gt('pages', 200)
      .order('pages', { ascending: false })
      .limit(1);
    expect(res.error).toBeNull();
    expect(res.data).toEqual([{ title: 'The Cyberiad', pages: 295 }]);
  });

  test('SETOF over GET, with a count and a range', async () => {
    const res = await anon
      .rpc('books_by', { author: 'Stanislaw Lem' }, { get: true, count: 'exact' })
      .select('title')
      .order('title')
      .range(0, 1);
    expect(res.error).toBeNull();
    expect(res.count).toBe(3);
    expect(res.status).toBe(206);
    expect(res.data).toEqual([{ title: "His Master's Voice" }, { title: 'Solaris' }]);
  });

  test('RETURNS TABLE columns can be filtered and ordered', async () => {
    const res = await anon.rpc('long_books', { min_pages: 250 }).lt('pages', 350).order('title');
    expect(res.error).toBeNull();
    expect(res.data).toEqual([{ title: 'The Cyberiad', pages: 295 }]);
  });

  test('RETURNS TABLE columns keep their types for in-lists and comparisons', async () => {
    const res = await anon.rpc('long_books').in('pages', [204, 295]).order('pages');
    expect(res.error).toBeNull();
    expect(res.data).toEqual([
      { title: 'Solaris', pages: 204 },
      { title: 'The Cyberiad', pages: 295 },
    ]);
  });

  test('SETOF a scalar is a JSON array', async () => {
    expect((await anon.rpc('author_names')).data).toEqual(['Stanislaw Lem', 'Ursula K. Le Guin']);
  });

  test('single() on a set result', async () => {
    const res = await anon.rpc('books_by', { author: 'Ursula K. Le Guin' }).select('title').single();
    expect(res.data).toEqual({ title: 'The Dispossessed' });
    const many = await anon.rpc('books_by', { author: 'Stanislaw Lem' }).single();
    expect(many.status).toBe(406);
    expect(many.error?.code).toBe('PGRST116');
  });

  test('an unknown column in a filter on a set result is 400', async () => {
    const res = await anon.rpc('books_by', { author: 'Stanislaw Lem' }).eq('nope', 1);
    expect(res.status).toBe(400);
  });
});

describe('refusals', () => {
  test('a volatile function over GET is 405, whether or not it writes', async () => {
    const writes = await lib.rest(`/rpc/rename_author?author_id=${lemId}&new_name=GET`, {
      token: user.token,
    });
    expect(writes.status).toBe(405);
    const reads = await anon.rpc('random_pick', {}, { get: true });
    expect(reads.status).toBe(405);
    expect((await anon.rpc('random_pick')).data).toBe(4);
    expect((await lib.admin.query(`select 1 from public.authors where name = 'GET'`)).rows).toEqual([]);
  });

  test('an unknown function is 404 PGRST202; unknown arguments are 404 with a hint', async () => {
    const missing = await anon.rpc('no_such_function');
    expect(missing.status).toBe(404);
    expect(missing.error?.code).toBe('PGRST202');
    const wrongArgs = await anon.rpc('add', { a: 1, c: 2 });
    expect(wrongArgs.status).toBe(404);
    expect(wrongArgs.error).toMatchObject({ code: 'PGRST202', hint: expect.stringContaining('a, b') });
  });

  test('a badly typed argument is 400 22P02', async () => {
    const res = await anon.rpc('add', { a: 'one', b: 2 });
    expect(res.status).toBe(400);
    expect(res.error?.code).toBe('22P02');
  });

  test('RAISE EXCEPTION is 400 P0001 with its message and hint; PTnnn sets the status', async () => {
    const res = await anon.rpc('fail', { message: 'The rule says no' });
    expect(res.status).toBe(400);
    expect(res.error).toMatchObject({ code: 'P0001', message: 'The rule says no', hint: 'from fail()' });
    const paid = await anon.rpc('pay_up');
    expect(paid.status).toBe(402);
    expect(paid.error).toMatchObject({ code: 'PT402', message: 'Payment required' });
  });

  test('a body that is not an object is 400 PGRST102 (unless the function takes one json argument)', async () => {
    const res = await lib.rest('/rpc/add', { method: 'POST', body: '[1,2]' });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: 'PGRST102' });
    const echoed = await lib.rest('/rpc/echo', { method: 'POST', body: '[1,2]' });
    expect(echoed.json).toEqual([1, 2]);
  });

  test('functions outside public are not callable', async () => {
    for (const name of ['pg_sleep', 'uid', 'auth.uid', 'pg_catalog.now']) {
      const res = await lib.rest(`/rpc/${name}`, { method: 'POST', body: '{}' });
      expect(res.status, name).toBe(404);
    }
  });
});
