// Reads on a schema the test creates itself, through the real supabase-js client (and raw HTTP
// where the headers matter): select lists, renames, casts, embeds and hints, every filter
// operator, logic trees, ordering, paging, counts, single objects, HEAD and RLS visibility.
import type { SupabaseClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startLibrary, type Library, type User } from './library.js';

let lib: Library;
let owner: User;
let other: User;
let anon: SupabaseClient;
const ids: Record<string, number> = {};

beforeAll(async () => {
  lib = await startLibrary();
  owner = await lib.signUp('owner');
  other = await lib.signUp('other');
  anon = lib.server.client();
  const authors = await lib.admin.query<{ id: number; name: string }>(
    `insert into public.authors (name, country, born, owner_id) values
       ('Ursula K. Le Guin', 'US', 1929, $1), ('Stanislaw Lem', 'PL', 1921, $1),
       ('Octavia E. Butler', 'US', 1947, $1), ('Ted Chiang', 'US', 1967, $1),
       ('Anonymous, Inc.', null, null, $1)
     returning id, name`,
    [owner.id],
  );
  for (const a of authors.rows) ids[a.name] = Number(a.id);
  const books = await lib.admin.query<{ id: number; title: string }>(
    `insert into public.books (title, author_id, editor_id, pages, published, price, tags, meta, owner_id) values
       ('The Dispossessed', $1, $2, 387, true, 9.99, '{anarchy,space}', '{"series":"Hainish"}', $6),
       ('The Left Hand of Darkness', $1, null, 304, true, 8.50, '{space}', '{"series":"Hainish"}', $6),
       ('Solaris', $2, null, 204, true, 7.25, '{ocean}', null, $6),
       ('Kindred', $3, $1, 264, true, null, '{}', null, $6),
       ('Stories of Your Life', $4, null, null, true, 12.00, '{}', null, $6),
       ('Fledgling draft', $3, null, 310, false, null, '{}', null, $6),
       ('Untitled, "quoted" (1)', $5, null, 1, true, null, '{}', null, $6)
     returning id, title`,
    [
      ids['Ursula K. Le Guin'],
      ids['Stanislaw Lem'],
      ids['Octavia E. Butler'],
      ids['Ted Chiang'],
      ids['Anonymous, Inc.'],
      owner.id,
    ],
  );
  for (const b of books.rows) ids[b.title] = Number(b.id);
  await lib.admin.query(
    `insert into public.reviews (book_id, reviewer, stars, body) values
       ($1, 'alice', 5, 'Haunting'), ($1, 'bob', 3, null), ($2, 'alice', 4, 'Vivid')`,
    [ids.Solaris, ids.Kindred],
  );
});
afterAll(async () => lib?.close());

const titles = (rows: { title: string }[] | null) => rows!.map((r) => r.title);

describe('select lists', () => {
  test('* returns every column', async () => {
    const { data, error } = await anon.from('authors').select().eq('name', 'Stanislaw Lem');
    expect(error).toBeNull();
    expect(data).toEqual([
      { id: ids['Stanislaw Lem'], name: 'Stanislaw Lem', country: 'PL', born: 1921, owner_id: owner.id },
    ]);
  });

  test('renames, casts and value types come back as JSON types', async () => {
    const { data, error } = await anon
      .from('books')
      .select('heading:title, pages::text, price, tags, meta, published, created_at')
      .eq('title', 'The Dispossessed')
      .single();
    expect(error).toBeNull();
    expect(data).toEqual({
      heading: 'The Dispossessed',
      pages: '387',
      price: 9.99,
      tags: ['anarchy', 'space'],
      meta: { series: 'Hainish' },
      published: true,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  test('quoted column names with reserved characters', async () => {
    await lib.admin.query(`insert into public.tricky values ('x', 7, 1)`);
    const res = await lib.rest(`/tricky?select=${encodeURIComponent('"a\\"b","with space",id')}`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual([{ 'a"b': 'x', 'with space': 7, id: 1 }]);
    const filtered = await lib.rest(`/tricky?select=id&${encodeURIComponent('"with space"')}=eq.7`);
    expect(filtered.json).toEqual([{ id: 1 }]);
  });
});

describe('embedded resources', () => {
  test('two foreign keys to one table: ambiguous without a hint (300 PGRST201)', async () => {
    const res = await anon.from('books').select('title, authors(name)');
    expect(res.status).toBe(300);
    expect(res.error).toMatchObject({ code: 'PGRST201' });
  });

  test('to-one by column hint and by constraint hint: an object or null', async () => {
    const { data, error } = await anon
      .from('books')
      .select('title, author:authors!author_id(name), editor:authors!books_editor_id_fkey(name)')
      .in('title', ['The Dispossessed', 'Solaris'])
      .order('title');
    expect(error).toBeNull();
    expect(data).toEqual([
      { title: 'Solaris', author: { name: 'Stanislaw Lem' }, editor: null },
      { title: 'The Dispossessed', author: { name: 'Ursula K. Le Guin' }, editor: { name: 'Stanislaw Lem' } },
    ]);
  });

  test('to-many: an array, empty when nothing matches, with embedded order and limit', async () => {
    const { data, error } = await anon
      .from('authors')
      .select('name, books!author_id(title)')
      .in('name', ['Ursula K. Le Guin', 'Anonymous, Inc.', 'Ted Chiang'])
      .order('name')
      .order('title', { referencedTable: 'books', ascending: false })
      .limit(1, { referencedTable: 'books' });
    expect(error).toBeNull();
    expect(data).toEqual([
      { name: 'Anonymous, Inc.', books: [{ title: 'Untitled, "quoted" (1)' }] },
      { name: 'Ted Chiang', books: [{ title: 'Stories of Your Life' }] },
      { name: 'Ursula K. Le Guin', books: [{ title: 'The Left Hand of Darkness' }] },
    ]);
  });

  test('one-to-one: a reverse foreign key on a unique column embeds as an object', async () => {
    await lib.admin.query(
      `create table public.author_bios (author_id bigint primary key references public.authors(id), bio text);
       grant select on public.author_bios to anon;`,
    );
    await lib.admin.query(`insert into public.author_bios values ($1, 'Polish writer')`, [
      ids['Stanislaw Lem'],
    ]);
    await lib.admin.query(`select pg_notify('tenantry_schema', 'reload')`);
    let res = await anon
      .from('authors')
      .select('name, author_bios(bio)')
      .in('name', ['Stanislaw Lem', 'Ted Chiang'])
      .order('name');
    for (let i = 0; i < 40 && res.error; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      res = await anon
        .from('authors')
        .select('name, author_bios(bio)')
        .in('name', ['Stanislaw Lem', 'Ted Chiang'])
        .order('name');
    }
    expect(res.error).toBeNull();
    expect(res.data).toEqual([
      { name: 'Stanislaw Lem', author_bios: { bio: 'Polish writer' } },
      { name: 'Ted Chiang', author_bios: null },
    ]);
  });

  test('nested embeds', async () => {
    const { data, error } = await anon
      .from('reviews')
      .select('reviewer, stars, books(title, author:authors!author_id(name))')
      .eq('book_id', ids.Solaris)
      .order('reviewer');
    expect(error).toBeNull();
    expect(data).toEqual([
      { reviewer: 'alice', stars: 5, books: { title: 'Solaris', author: { name: 'Stanislaw Lem' } } },
      { reviewer: 'bob', stars: 3, books: { title: 'Solaris', author: { name: 'Stanislaw Lem' } } },
    ]);
  });

  test('a filter on an embedded column narrows the embed, and the parents only with !inner', async () => {
    const left = await anon
      .from('books')
      .select('title, reviews(reviewer)')
      .eq('reviews.stars', 5)
      .in('title', ['Solaris', 'Kindred'])
      .order('title');
    expect(left.error).toBeNull();
    expect(left.data).toEqual([
      { title: 'Kindred', reviews: [] },
      { title: 'Solaris', reviews: [{ reviewer: 'alice' }] },
    ]);
    const inner = await anon.from('books').select('title, reviews!inner(reviewer)').eq('reviews.stars', 5);
    expect(inner.error).toBeNull();
    expect(inner.data).toEqual([{ title: 'Solaris', reviews: [{ reviewer: 'alice' }] }]);
    const toOneInner = await anon
      .from('books')
      .select('title, author:authors!author_id!inner(country)')
      .eq('author.country', 'PL');
    expect(toOneInner.error).toBeNull();
    expect(toOneInner.data).toEqual([{ title: 'Solaris', author: { country: 'PL' } }]);
  });

  test('rel=not.is.null / rel=is.null keep parents with / without matching embedded rows', async () => {
    const withReviews = await anon
      .from('books')
      .select('title, reviews(stars)')
      .not('reviews', 'is', null)
      .order('title');
    expect(withReviews.error).toBeNull();
    expect(titles(withReviews.data)).toEqual(['Kindred', 'Solaris']);
    const fiveStars = await anon
      .from('books')
      .select('title, reviews(stars)')
      .eq('reviews.stars', 5)
      .not('reviews', 'is', null);
    expect(fiveStars.data).toEqual([{ title: 'Solaris', reviews: [{ stars: 5 }] }]);
    const without = await anon
      .from('books')
      .select('title, r:reviews()')
      .is('r', null)
      .lt('pages', 250)
      .order('title');
    expect(without.error).toBeNull();
    // An empty embed only filters: it is not part of the output.
    expect(without.data).toEqual([{ title: 'Untitled, "quoted" (1)' }]);
    const innerOnly = await anon.from('books').select('title, reviews!inner()').order('title');
    expect(innerOnly.data).toEqual([{ title: 'Kindred' }, { title: 'Solaris' }]);
    const nothing = await lib.rest('/books?select=reviews!inner()&title=eq.Solaris');
    expect(nothing.json).toEqual([{}]);
    const wrongOp = await lib.rest('/books?select=title,reviews(stars)&reviews=eq.1');
    expect(wrongOp.status).toBe(400);
    expect((wrongOp.json as { code: string }).code).toBe('PGRST120');
  });

  test('embeds respect RLS on the embedded table', async () => {
    const asAnon = await anon
      .from('authors')
      .select('name, books!author_id(title)')
      .eq('name', 'Octavia E. Butler');
    expect(asAnon.data).toEqual([{ name: 'Octavia E. Butler', books: [{ title: 'Kindred' }] }]);
    const asOwner = await owner.client
      .from('authors')
      .select('name, books!author_id(title)')
      .eq('name', 'Octavia E. Butler')
      .order('title', { referencedTable: 'books' });
    expect(titles(asOwner.data![0]!.books)).toEqual(['Fledgling draft', 'Kindred']);
  });
});

describe('filters', () => {
  const books = () => anon.from('books').select('title').order('title');

  test('comparisons on numbers, text and booleans', async () => {
    expect(titles((await books().eq('pages', 204)).data)).toEqual(['Solaris']);
    expect(titles((await books().neq('pages', 204).gt('pages', 100)).data)).toEqual([
      'Kindred',
      'The Dispossessed',
      'The Left Hand of Darkness',
    ]);
    expect(titles((await books().gte('pages', 304)).data)).toEqual([
      'The Dispossessed',
      'The Left Hand of Darkness',
    ]);
    expect(titles((await books().lt('pages', 264)).data)).toEqual(['Solaris', 'Untitled, "quoted" (1)']);
    expect(titles((await books().lte('pages', 264).gt('pages', 1)).data)).toEqual(['Kindred', 'Solaris']);
    expect(titles((await books().eq('price', 9.99)).data)).toEqual(['The Dispossessed']);
    expect(titles((await books().gt('title', 'T')).data)).toEqual([
      'The Dispossessed',
      'The Left Hand of Darkness',
      'Untitled, "quoted" (1)',
    ]);
  });

  test('like and ilike, with * as the wildcard', async () => {
    expect(titles((await books().like('title', 'The*')).data)).toEqual([
      'The Dispossessed',
      'The Left Hand of Darkness',
    ]);
    expect(titles((await books().like('title', '%darkness')).data)).toEqual([]);
    expect(titles((await books().ilike('title', '*DARKNESS')).data)).toEqual(['The Left Hand of Darkness']);
    expect(titles((await books().not('title', 'ilike', 't*')).data)).toEqual([
      'Kindred',
      'Solaris',
      'Stories of Your Life',
      'Untitled, "quoted" (1)',
    ]);
  });

  test('is null / not null / true / false', async () => {
    expect(titles((await books().is('pages', null)).data)).toEqual(['Stories of Your Life']);
    expect(titles((await books().not('price', 'is', null)).data)).toEqual([
      'Solaris',
      'Stories of Your Life',
      'The Dispossessed',
      'The Left Hand of Darkness',
    ]);
    expect(titles((await books().is('published', false)).data)).toEqual([]);
    const mine = await owner.client.from('books').select('title').is('published', false);
    expect(titles(mine.data)).toEqual(['Fledgling draft']);
    const raw = await lib.rest(
      '/books?select=title&pages=not.is.null&published=is.true&price=is.null&order=title',
    );
    expect(raw.json).toEqual([{ title: 'Kindred' }, { title: 'Untitled, "quoted" (1)' }]);
  });

  test('in, with quoted values holding reserved characters', async () => {
    expect(titles((await books().in('title', ['Solaris', 'Kindred', 'Nope'])).data)).toEqual([
      'Kindred',
      'Solaris',
    ]);
    expect(titles((await books().in('title', ['Untitled, "quoted" (1)'])).data)).toEqual([
      'Untitled, "quoted" (1)',
    ]);
    const authors = await anon
      .from('authors')
      .select('name')
      .in('name', ['Anonymous, Inc.', 'Ted Chiang'])
      .order('name');
    expect(authors.data).toEqual([{ name: 'Anonymous, Inc.' }, { name: 'Ted Chiang' }]);
    expect(titles((await books().in('pages', [204, 264])).data)).toEqual(['Kindred', 'Solaris']);
    expect(titles((await books().not('pages', 'in', '(204,264,1)').gt('pages', 0)).data)).toEqual([
      'The Dispossessed',
      'The Left Hand of Darkness',
    ]);
    expect((await books().in('title', [])).data).toEqual([]);
    const arrays = await lib.rest(
      `/books?select=title&tags=in.(${encodeURIComponent('"{ocean}","{space}"')})&order=title`,
    );
    expect(arrays.json).toEqual([{ title: 'Solaris' }, { title: 'The Left Hand of Darkness' }]);
    const arrayEq = await anon.from('books').select('title').eq('tags', '{anarchy,space}');
    expect(titles(arrayEq.data)).toEqual(['The Dispossessed']);
  });

  test('or and and, nested and negated', async () => {
    expect(titles((await books().or('pages.lt.210,title.eq.Kindred')).data)).toEqual([
      'Kindred',
      'Solaris',
      'Untitled, "quoted" (1)',
    ]);
    expect(titles((await books().or('and(pages.gt.300,price.lt.9),title.like.Sol*')).data)).toEqual([
      'Solaris',
      'The Left Hand of Darkness',
    ]);
    const raw = await lib.rest(
      `/books?select=title&order=title&not.or=(pages.lt.300,pages.is.null)&or=(title.eq."The Dispossessed",title.eq.Kindred)`,
    );
    expect(raw.json).toEqual([{ title: 'The Dispossessed' }]);
    const inOr = await lib.rest(
      `/authors?select=name&or=(name.in.("Anonymous, Inc.",Nobody),born.gt.1960)&order=name`,
    );
    expect(inOr.json).toEqual([{ name: 'Anonymous, Inc.' }, { name: 'Ted Chiang' }]);
    const embedded = await anon
      .from('books')
      .select('title, reviews!inner(reviewer)')
      .or('stars.eq.4,reviewer.eq.bob', { referencedTable: 'reviews' })
      .order('title');
    expect(embedded.error).toBeNull();
    expect(embedded.data).toEqual([
      { title: 'Kindred', reviews: [{ reviewer: 'alice' }] },
      { title: 'Solaris', reviews: [{ reviewer: 'bob' }] },
    ]);
  });

  test('values are data: quotes, semicolons and SQL in values match nothing', async () => {
    for (const value of ["x' or '1'='1", '1;drop table books', 'a"b', '\\', '%', '*']) {
      const { data, error } = await anon.from('books').select('title').eq('title', value);
      expect(error).toBeNull();
      expect(data).toEqual([]);
    }
    const count = await lib.admin.query('select count(*)::int as n from public.books');
    expect(count.rows[0].n).toBe(7);
  });
});

describe('order, paging and counts', () => {
  test('several terms, desc, nullsfirst and nullslast', async () => {
    const first = await anon
      .from('books')
      .select('title')
      .order('pages', { ascending: false, nullsFirst: true })
      .limit(2);
    expect(titles(first.data)).toEqual(['Stories of Your Life', 'The Dispossessed']);
    const last = await anon
      .from('books')
      .select('title')
      .order('price', { ascending: true, nullsFirst: false })
      .order('title', { ascending: false });
    expect(titles(last.data)).toEqual([
      'Solaris',
      'The Left Hand of Darkness',
      'The Dispossessed',
      'Stories of Your Life',
      'Untitled, "quoted" (1)',
      'Kindred',
    ]);
  });

  test('limit and offset, and range()', async () => {
    const page = await anon.from('books').select('title').order('title').range(1, 2);
    expect(titles(page.data)).toEqual(['Solaris', 'Stories of Your Life']);
    const raw = await lib.rest('/books?select=title&order=title&limit=2&offset=4');
    expect(raw.json).toEqual([{ title: 'The Left Hand of Darkness' }, { title: 'Untitled, "quoted" (1)' }]);
    expect(raw.headers.get('content-range')).toBe('4-5/*');
  });

  test('Range and Range-Unit headers, including an open range', async () => {
    const raw = await lib.rest('/books?select=title&order=title', {
      headers: { range: '1-2', 'range-unit': 'items' },
    });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-range')).toBe('1-2/*');
    expect(raw.json).toEqual([{ title: 'Solaris' }, { title: 'Stories of Your Life' }]);
    const open = await lib.rest('/books?select=title&order=title', { headers: { range: '5-' } });
    expect(open.json).toEqual([{ title: 'Untitled, "quoted" (1)' }]);
  });

  test('count=exact: Content-Range first-last/total, 206 when partial, 200 when whole', async () => {
    const partial = await anon.from('books').select('title', { count: 'exact' }).order('title').range(0, 1);
    expect(partial.status).toBe(206);
    expect(partial.count).toBe(6);
    const whole = await anon.from('books').select('title', { count: 'exact' });
    expect(whole.status).toBe(200);
    expect(whole.count).toBe(6);
    const raw = await lib.rest('/books?select=title&order=title&offset=2&limit=3', {
      headers: { prefer: 'count=exact' },
    });
    expect(raw.status).toBe(206);
    expect(raw.headers.get('content-range')).toBe('2-4/6');
    expect(raw.headers.get('preference-applied')).toContain('count=exact');
  });

  test('an empty result with a count is */0; an offset beyond the total is 416 PGRST103', async () => {
    const empty = await lib.rest('/books?title=eq.none', { headers: { prefer: 'count=exact' } });
    expect(empty.status).toBe(200);
    expect(empty.headers.get('content-range')).toBe('*/0');
    expect(empty.json).toEqual([]);
    const beyond = await anon.from('books').select('title', { count: 'exact' }).range(50, 60);
    expect(beyond.status).toBe(416);
    expect(beyond.error).toMatchObject({ code: 'PGRST103' });
  });

  test('HEAD: headers and count, no body', async () => {
    const res = await anon.from('books').select('*', { count: 'exact', head: true }).gt('pages', 250);
    expect(res.error).toBeNull();
    expect(res.count).toBe(3);
    expect(res.data).toBeNull();
    const raw = await lib.rest('/books?select=title', { method: 'HEAD', headers: { prefer: 'count=exact' } });
    expect(raw.status).toBe(200);
    expect(raw.text).toBe('');
    expect(raw.headers.get('content-range')).toBe('0-5/6');
  });
});

describe('single objects', () => {
  test('single() is an object; zero or several rows are 406 PGRST116', async () => {
    const one = await anon.from('authors').select('name').eq('country', 'PL').single();
    expect(one.data).toEqual({ name: 'Stanislaw Lem' });
    const raw = await lib.rest('/authors?select=name&country=eq.PL', {
      headers: { accept: 'application/vnd.pgrst.object+json' },
    });
    expect(raw.headers.get('content-type')).toContain('application/vnd.pgrst.object+json');
    const none = await anon.from('authors').select('name').eq('country', 'FR').single();
    expect(none.status).toBe(406);
    expect(none.error).toMatchObject({
      code: 'PGRST116',
      message: 'Cannot coerce the result to a single JSON object',
      details: 'The result contains 0 rows',
    });
    const many = await anon.from('authors').select('name').eq('country', 'US').single();
    expect(many.error).toMatchObject({ code: 'PGRST116', details: 'The result contains 3 rows' });
  });

  test('maybeSingle(): null for no rows, an error for several', async () => {
    const none = await anon.from('authors').select('name').eq('country', 'FR').maybeSingle();
    expect(none).toMatchObject({ data: null, error: null });
    const many = await anon.from('authors').select('name').eq('country', 'US').maybeSingle();
    expect(many.error?.code).toBe('PGRST116');
  });
});

describe('row-level security on reads', () => {
  test('rows RLS hides are simply absent, for anon and for other users', async () => {
    const asOwner = await owner.client.from('books').select('title').eq('published', false);
    expect(titles(asOwner.data)).toEqual(['Fledgling draft']);
    const asOther = await other.client.from('books').select('title').eq('published', false);
    expect(asOther).toMatchObject({ data: [], error: null, status: 200 });
    const byId = await anon.from('books').select('title').eq('id', ids['Fledgling draft']).maybeSingle();
    expect(byId).toMatchObject({ data: null, error: null });
  });

  test('counts only count visible rows', async () => {
    const asOther = await other.client.from('books').select('*', { count: 'exact', head: true });
    const asOwner = await owner.client.from('books').select('*', { count: 'exact', head: true });
    expect(asOther.count).toBe(6);
    expect(asOwner.count).toBe(7);
  });
});
