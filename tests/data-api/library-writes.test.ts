// Writes on a schema the test creates itself, through supabase-js and raw HTTP: insert (single,
// bulk, columns=, defaults), upsert on the key, on a composite key and on a unique column,
// update and delete with filters, return preferences, status codes, constraint errors and RLS.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startLibrary, type Library, type User } from './library.js';

let lib: Library;
let owner: User;
let other: User;
let authorId: number;
let othersAuthorId: number;

beforeAll(async () => {
  lib = await startLibrary();
  owner = await lib.signUp('writer');
  other = await lib.signUp('other');
  const a = await owner.client
    .from('authors')
    .insert({ name: 'Iain M. Banks', country: 'GB' })
    .select('id')
    .single();
  expect(a.error).toBeNull();
  authorId = (a.data as { id: number }).id;
  const b = await other.client.from('authors').insert({ name: 'N. K. Jemisin' }).select('id').single();
  othersAuthorId = (b.data as { id: number }).id;
});
afterAll(async () => lib?.close());

const rowsWhere = async (sql: string, values: unknown[] = []) => (await lib.admin.query(sql, values)).rows;

describe('insert', () => {
  test('one object, minimal by default: 201, no body, defaults filled in by the database', async () => {
    const res = await owner.client.from('books').insert({ title: 'Consider Phlebas', author_id: authorId });
    expect(res).toMatchObject({ status: 201, data: null, error: null });
    const [row] = await rowsWhere(
      `select published, tags, owner_id from public.books where title = 'Consider Phlebas'`,
    );
    expect(row).toEqual({ published: true, tags: [], owner_id: owner.id });
  });

  test('representation with a select list and renames; single() gives the object', async () => {
    const res = await owner.client
      .from('books')
      .insert({ title: 'Excession', author_id: authorId, pages: 451, price: '7.5' })
      .select('id, name:title, pages, price, author:authors!author_id(name)')
      .single();
    expect(res.status).toBe(201);
    expect(res.error).toBeNull();
    expect(res.data).toEqual({
      id: expect.any(Number),
      name: 'Excession',
      pages: 451,
      price: 7.5,
      author: { name: 'Iain M. Banks' },
    });
  });

  test('bulk insert with different keys per row and missing=default: missing ones take their defaults', async () => {
    const res = await owner.client
      .from('books')
      .insert(
        [
          { title: 'Bulk A', author_id: authorId, published: false },
          { title: 'Bulk B', author_id: authorId, tags: ['x', 'y'] },
        ],
        { defaultToNull: false },
      )
      .select('title, published, tags');
    expect(res.status).toBe(201);
    expect(res.data).toEqual([
      { title: 'Bulk A', published: false, tags: [] },
      { title: 'Bulk B', published: true, tags: ['x', 'y'] },
    ]);
  });

  test('supabase-js default (defaultToNull): a missing key is NULL, so NOT NULL refuses it (400 23502)', async () => {
    const res = await owner.client.from('books').insert([
      { title: 'Nulls', author_id: authorId, published: true },
      { title: 'Nulls 2', author_id: authorId },
    ]);
    expect(res.status).toBe(400);
    expect(res.error?.code).toBe('23502');
    expect(await rowsWhere(`select 1 from public.books where title like 'Nulls%'`)).toEqual([]);
  });

  test('columns= limits which keys are written', async () => {
    const res = await lib.rest('/books?columns=title,author_id&select=title,pages', {
      method: 'POST',
      token: owner.token,
      headers: { prefer: 'return=representation' },
      body: JSON.stringify([{ title: 'Columns', author_id: authorId, pages: 999 }]),
    });
    expect(res.status).toBe(201);
    expect(res.json).toEqual([{ title: 'Columns', pages: null }]);
    const quoted = await lib.rest(`/books?columns=${encodeURIComponent('"title","author_id"')}`, {
      method: 'POST',
      token: owner.token,
      body: JSON.stringify({ title: 'Quoted columns', author_id: authorId }),
    });
    expect(quoted.status).toBe(201);
    expect(quoted.text).toBe('');
    // A quoted name may hold a space, as supabase-js writes it for such keys.
    const spaced = await lib.rest(
      `/tricky?columns=${encodeURIComponent('"with space",id')}&select=${encodeURIComponent('"with space",id')}`,
      {
        method: 'POST',
        token: owner.token,
        headers: { prefer: 'return=representation' },
        body: JSON.stringify([{ 'with space': 7, id: 70 }]),
      },
    );
    expect(spaced.status).toBe(201);
    expect(spaced.json).toEqual([{ 'with space': 7, id: 70 }]);
  });

  test('an empty array inserts nothing', async () => {
    const res = await lib.rest('/books', {
      method: 'POST',
      token: owner.token,
      headers: { prefer: 'return=representation' },
      body: '[]',
    });
    expect(res.status).toBe(201);
    expect(res.json).toEqual([]);
  });

  test('constraint errors: unique and foreign key 409, check and bad types 400', async () => {
    const duplicate = await owner.client.from('authors').insert({ name: 'Iain M. Banks' });
    expect(duplicate.status).toBe(409);
    // Postgres leaves the key out of the details when the table has row-level security.
    expect(duplicate.error).toMatchObject({
      code: '23505',
      message: expect.stringContaining('authors_name_key'),
    });
    const dangling = await owner.client.from('books').insert({ title: 'Orphan', author_id: 987654 });
    expect(dangling.status).toBe(409);
    expect(dangling.error?.code).toBe('23503');
    const check = await owner.client
      .from('books')
      .insert({ title: 'Negative', author_id: authorId, pages: -1 });
    expect(check.status).toBe(400);
    expect(check.error?.code).toBe('23514');
    const type = await owner.client.from('books').insert({ title: 'Typed', author_id: 'abc' });
    expect(type.status).toBe(400);
    expect(type.error?.code).toBe('22P02');
    const unknown = await owner.client
      .from('books')
      .insert({ title: 'Unknown', author_id: authorId, colour: 'red' });
    expect(unknown.status).toBe(400);
    expect(unknown.error?.code).toBe('PGRST204');
  });

  test('RLS: inserting a row the policy refuses is 403 42501 and writes nothing; anon is 401', async () => {
    const res = await owner.client
      .from('books')
      .insert({ title: 'Forged', author_id: authorId, owner_id: other.id });
    expect(res.status).toBe(403);
    expect(res.error?.code).toBe('42501');
    const anon = await lib.server.client().from('authors').insert({ name: 'Anon author' });
    expect(anon.status).toBe(401);
    expect(anon.error?.code).toBe('42501');
    const noGrant = await owner.client.from('secrets').insert({ id: 1, value: 'x' });
    expect(noGrant.status).toBe(403);
    expect(await rowsWhere(`select 1 from public.books where title = 'Forged'`)).toEqual([]);
    expect(await rowsWhere(`select 1 from public.authors where name = 'Anon author'`)).toEqual([]);
  });

  test('bodies that are not objects are 400 PGRST102', async () => {
    for (const body of ['42', '"text"', '[1,2]', 'null', '[{"title":"ok"}, 3]']) {
      const res = await lib.rest('/authors', { method: 'POST', token: owner.token, body });
      expect(res.status, body).toBe(400);
      expect((res.json as { code: string }).code, body).toBe('PGRST102');
    }
  });
});

describe('upsert', () => {
  test('merge-duplicates on the primary key updates the existing row', async () => {
    const created = await owner.client
      .from('authors')
      .upsert({ name: 'Ann Leckie', country: 'US' })
      .select('id, name, country')
      .single();
    expect(created.status).toBe(201);
    const id = (created.data as { id: number }).id;
    const merged = await owner.client
      .from('authors')
      .upsert({ id, name: 'Ann Leckie', country: 'USA' })
      .select('id, country')
      .single();
    expect(merged.error).toBeNull();
    // Nothing was created, only updated: 200, as PostgREST answers.
    expect(merged.status).toBe(200);
    expect(merged.data).toEqual({ id, country: 'USA' });
    const mixed = await owner.client.from('authors').upsert([
      { id, name: 'Ann Leckie', country: 'US' },
      { id: 900001, name: 'Martha Wells', country: 'US' },
    ]);
    expect(mixed.status).toBe(201);
    expect(
      await rowsWhere(`select count(*)::int as n from public.authors where name = 'Ann Leckie'`),
    ).toEqual([{ n: 1 }]);
  });

  test('on_conflict on a unique column, and ignore-duplicates keeps the first row', async () => {
    const first = await owner.client
      .from('books')
      .upsert(
        { title: 'Ancillary Justice', author_id: authorId, isbn: '978-0316246620', pages: 386 },
        { onConflict: 'isbn' },
      );
    expect(first.status).toBe(201);
    const merged = await owner.client
      .from('books')
      .upsert(
        { title: 'Ancillary Justice (2nd)', author_id: authorId, isbn: '978-0316246620', pages: 400 },
        { onConflict: 'isbn' },
      )
      .select('title, pages');
    expect(merged.data).toEqual([{ title: 'Ancillary Justice (2nd)', pages: 400 }]);
    const ignored = await owner.client
      .from('books')
      .upsert(
        { title: 'Ignored', author_id: authorId, isbn: '978-0316246620' },
        { onConflict: 'isbn', ignoreDuplicates: true },
      )
      .select('title');
    expect(ignored.error).toBeNull();
    expect(ignored.data).toEqual([]);
    expect(await rowsWhere(`select title from public.books where isbn = '978-0316246620'`)).toEqual([
      { title: 'Ancillary Justice (2nd)' },
    ]);
  });

  test('a composite primary key, in bulk', async () => {
    const [book] = await rowsWhere(`select id from public.books where title = 'Excession'`);
    const rows = [
      { book_id: book.id, reviewer: 'carol', stars: 2 },
      { book_id: book.id, reviewer: 'dave', stars: 4 },
    ];
    expect((await owner.client.from('reviews').upsert(rows)).status).toBe(201);
    const again = await owner.client
      .from('reviews')
      .upsert([{ ...rows[0]!, stars: 5 }, rows[1]!])
      .select('reviewer, stars')
      .order('reviewer');
    expect(again.error).toBeNull();
    expect(
      await rowsWhere(`select reviewer, stars from public.reviews where book_id = $1 order by 1`, [book.id]),
    ).toEqual([
      { reviewer: 'carol', stars: 5 },
      { reviewer: 'dave', stars: 4 },
    ]);
  });

  test('a merge writing only key columns returns the existing rows too; an empty merge is 200', async () => {
    await lib.admin.query(`insert into public.tricky (id) values (5)`);
    const res = await lib.rest('/tricky?select=id', {
      method: 'POST',
      token: owner.token,
      headers: { prefer: 'return=representation, resolution=merge-duplicates' },
      body: JSON.stringify([{ id: 5 }]),
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual([{ id: 5 }]);
    const empty = await lib.rest('/reviews', {
      method: 'POST',
      token: owner.token,
      headers: { prefer: 'return=representation, resolution=merge-duplicates' },
      body: '[]',
    });
    expect(empty.status).toBe(200);
    expect(empty.json).toEqual([]);
  });

  test('on_conflict naming an unknown column is 400', async () => {
    const res = await owner.client.from('authors').upsert({ name: 'X' }, { onConflict: 'nope' });
    expect(res.status).toBe(400);
  });
});

describe('update', () => {
  test('with a filter: 204 minimal, 200 with the changed rows under representation', async () => {
    const minimal = await owner.client.from('books').update({ pages: 500 }).eq('title', 'Excession');
    expect(minimal).toMatchObject({ status: 204, data: null, error: null });
    const rep = await owner.client
      .from('books')
      .update({ pages: 501, price: 10 })
      .eq('title', 'Excession')
      .select('title, pages, price');
    expect(rep.status).toBe(200);
    expect(rep.data).toEqual([{ title: 'Excession', pages: 501, price: 10 }]);
    const none = await owner.client.from('books').update({ pages: 1 }).eq('title', 'No such book').select();
    expect(none).toMatchObject({ status: 200, data: [], error: null });
  });

  test('null, arrays and JSON values', async () => {
    const res = await owner.client
      .from('books')
      .update({ price: null, tags: ['culture', 'ships'], meta: { series: 'Culture', n: 5 } })
      .eq('title', 'Excession')
      .select('price, tags, meta')
      .single();
    expect(res.data).toEqual({ price: null, tags: ['culture', 'ships'], meta: { series: 'Culture', n: 5 } });
  });

  test('filters combine: in, or, not', async () => {
    const res = await owner.client
      .from('books')
      .update({ published: false })
      .in('title', ['Bulk A', 'Bulk B', 'Excession'])
      .or('pages.is.null,pages.gt.1000')
      .select('title')
      .order('title');
    expect(res.data).toEqual([{ title: 'Bulk A' }, { title: 'Bulk B' }]);
  });

  test('RLS: rows the caller cannot change are untouched and the answer is empty, not an error', async () => {
    const res = await other.client.from('authors').update({ country: 'XX' }).eq('id', authorId).select();
    expect(res).toMatchObject({ status: 200, data: [], error: null });
    const moved = await owner.client.from('authors').update({ owner_id: other.id }).eq('id', authorId);
    expect(moved.status).toBe(403);
    expect(await rowsWhere(`select country, owner_id from public.authors where id = $1`, [authorId])).toEqual(
      [{ country: 'GB', owner_id: owner.id }],
    );
  });

  test('a filterless update is refused with 400 and changes nothing', async () => {
    const res = await lib.rest('/authors', { method: 'PATCH', token: owner.token, body: '{"country":"ZZ"}' });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: '21000', message: 'UPDATE requires a WHERE clause' });
    expect(await rowsWhere(`select 1 from public.authors where country = 'ZZ'`)).toEqual([]);
  });

  test('bad bodies: empty object, array, unknown column', async () => {
    for (const body of ['{}', '[{"country":"x"}]', '{"nope":1}']) {
      const res = await lib.rest(`/authors?id=eq.${authorId}`, { method: 'PATCH', token: owner.token, body });
      expect(res.status, body).toBe(400);
    }
  });
});

describe('delete', () => {
  test('with a filter: 204, or the deleted rows under representation', async () => {
    await owner.client
      .from('authors')
      .insert([{ name: 'Doomed 1' }, { name: 'Doomed 2' }, { name: 'Doomed 3' }]);
    const minimal = await owner.client.from('authors').delete().eq('name', 'Doomed 1');
    expect(minimal).toMatchObject({ status: 204, error: null });
    const rep = await owner.client
      .from('authors')
      .delete()
      .like('name', 'Doomed*')
      .select('name')
      .order('name');
    expect(rep.status).toBe(200);
    expect(rep.data).toEqual([{ name: 'Doomed 2' }, { name: 'Doomed 3' }]);
    expect(await rowsWhere(`select 1 from public.authors where name like 'Doomed%'`)).toEqual([]);
  });

  test('RLS: other users’ rows are not deleted', async () => {
    const res = await owner.client.from('authors').delete().eq('id', othersAuthorId).select();
    expect(res).toMatchObject({ status: 200, data: [], error: null });
    expect(await rowsWhere(`select 1 from public.authors where id = $1`, [othersAuthorId])).toHaveLength(1);
  });

  test('a filterless delete is refused with 400 and deletes nothing', async () => {
    const res = await lib.rest('/reviews', { method: 'DELETE', token: owner.token });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: '21000', message: 'DELETE requires a WHERE clause' });
    expect((await rowsWhere(`select count(*)::int as n from public.reviews`))[0].n).toBeGreaterThan(0);
  });
});

describe('tables clients may write but not read', () => {
  test('an insert without read access succeeds under return=minimal; asking for the row back is refused', async () => {
    const anon = lib.server.client();
    const res = await anon.from('feedback').insert({ message: 'Great library' });
    expect(res).toMatchObject({ status: 201, error: null });
    const mine = await owner.client.from('feedback').insert([{ message: 'One' }, { message: 'Two' }]);
    expect(mine.status).toBe(201);
    const back = await owner.client.from('feedback').insert({ message: 'Three' }).select();
    expect(back.status).toBe(403);
    expect(await rowsWhere(`select message from public.feedback order by id`)).toEqual([
      { message: 'Great library' },
      { message: 'One' },
      { message: 'Two' },
    ]);
  });

  test('column privileges: writes and reads touch only the granted columns', async () => {
    const insert = await owner.client.from('staff').insert({ id: 1, name: 'Ada' });
    expect(insert.status).toBe(201);
    const rep = await owner.client.from('staff').insert({ id: 2, name: 'Bob' }).select('id, name').single();
    expect(rep).toMatchObject({ status: 201, data: { id: 2, name: 'Bob' } });
    const update = await owner.client.from('staff').update({ name: 'Ada L.' }).eq('id', 1).select('name');
    expect(update).toMatchObject({ status: 200, data: [{ name: 'Ada L.' }] });
    const minimal = await owner.client.from('staff').update({ name: 'Ada Lovelace' }).eq('id', 1);
    expect(minimal.status).toBe(204);
    const salary = await owner.client.from('staff').select('salary');
    expect(salary.status).toBe(403);
    const star = await owner.client.from('staff').update({ name: 'x' }).eq('id', 1).select();
    expect(star.status).toBe(403);
  });
});

describe('single() on writes', () => {
  test('a write asked for one row that touches several is 406 PGRST116 and is undone', async () => {
    await owner.client.from('authors').insert([
      { name: 'Twin 1', country: 'T' },
      { name: 'Twin 2', country: 'T' },
    ]);
    const update = await owner.client
      .from('authors')
      .update({ born: 1900 })
      .eq('country', 'T')
      .select('name')
      .single();
    expect(update.status).toBe(406);
    expect(update.error).toMatchObject({ code: 'PGRST116', details: 'The result contains 2 rows' });
    expect(await rowsWhere(`select born from public.authors where country = 'T'`)).toEqual([
      { born: null },
      { born: null },
    ]);
    const del = await owner.client.from('authors').delete().eq('country', 'T').select().single();
    expect(del.status).toBe(406);
    expect(await rowsWhere(`select 1 from public.authors where country = 'T'`)).toHaveLength(2);
    const insert = await owner.client
      .from('authors')
      .insert([{ name: 'Twin 3' }, { name: 'Twin 4' }])
      .select()
      .single();
    expect(insert.status).toBe(406);
    expect(await rowsWhere(`select 1 from public.authors where name in ('Twin 3', 'Twin 4')`)).toEqual([]);
    const one = await owner.client
      .from('authors')
      .update({ born: 1901 })
      .eq('name', 'Twin 1')
      .select('born')
      .single();
    expect(one).toMatchObject({ status: 200, data: { born: 1901 } });
  });
});

describe('Prefer and Content-Profile', () => {
  test('Preference-Applied echoes what was honoured', async () => {
    const res = await lib.rest('/authors?select=name', {
      method: 'POST',
      token: owner.token,
      headers: { prefer: 'return=representation, missing=default, tx=rollback, nonsense' },
      body: JSON.stringify({ name: 'Prefer test' }),
    });
    expect(res.status).toBe(201);
    expect(res.json).toEqual([{ name: 'Prefer test' }]);
    // PostgREST's order; tx is not applied because this server does not allow the override.
    expect(res.headers.get('preference-applied')).toBe('missing=default, return=representation');
  });

  test('writes to another schema are 406 PGRST106', async () => {
    const res = await lib.rest('/hidden', {
      method: 'POST',
      token: owner.token,
      headers: { 'content-profile': 'private' },
      body: '{"id":2}',
    });
    expect(res.status).toBe(406);
    expect(res.json).toMatchObject({ code: 'PGRST106' });
  });
});
