// Embedding as PostgREST does it, through the real supabase-js client on a schema of our own:
// relationships named by table, foreign-key column or constraint, hints, self-references,
// one-to-one, many-to-many through a junction, !inner/!left, embedded order and paging, ordering
// by a to-one embed, spread, computed fields and relationships, aggregates (on and off), and
// PostgREST's PGRST200/201 bodies; hostile names in every new position are refused with 400.
import type { SupabaseClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { startLibrary, type Library } from './library.js';

const EMBEDS_SQL = `
create table public.people (handle text primary key, nickname text);
create table public.rooms (id bigint primary key, name text not null);
create table public.room_settings (id bigint primary key references public.rooms(id), topic text);
create table public.posts (
  id bigint primary key,
  body text,
  handle text not null references public.people,
  room_id bigint not null references public.rooms,
  likes integer not null default 0
);
create table public.pairings (
  id bigint primary key,
  lead text not null references public.people,
  partner text not null references public.people,
  spare text references public.people
);
create table public.folders (id bigint primary key, title text not null, parent_id bigint references public.folders(id));
create table public.tools (id bigint primary key, name text not null);
create table public.labels (id bigint primary key, name text not null);
create table public.tool_labels (
  tool_id bigint references public.tools(id),
  label_id bigint references public.labels(id),
  primary key (tool_id, label_id)
);
create function public.excerpt(public.posts) returns text
  language sql stable as $$ select left($1.body, 5) $$;
create function public.popular_posts(public.people) returns setof public.posts
  language sql stable as $$ select * from public.posts where handle = $1.handle and likes >= 10 $$;
create function public.room_of(public.posts) returns setof public.rooms
  language sql stable rows 1 as $$ select * from public.rooms where id = $1.room_id $$;
create function public.poster(public.posts) returns public.people
  language sql stable as $$ select * from public.people where handle = $1.handle $$;

insert into public.people values ('ada', 'Ada'), ('bob', 'Bobby'), ('cy', null);
insert into public.rooms values (1, 'general'), (2, 'random'), (3, 'empty');
insert into public.room_settings values (1, 'Everything'), (2, null);
insert into public.posts values
  (1, 'Hello world', 'ada', 1, 12), (2, 'Second post', 'ada', 2, 3),
  (3, 'Bob was here', 'bob', 1, 20), (4, 'Ada again', 'ada', 1, 0);
insert into public.pairings values (1, 'ada', 'bob', null), (2, 'bob', 'cy', 'ada');
insert into public.folders values (1, 'root', null), (2, 'docs', 1), (3, 'music', 1), (4, 'drafts', 2);
insert into public.tools values (1, 'hammer'), (2, 'saw'), (3, 'glue');
insert into public.labels values (1, 'wood'), (2, 'metal'), (3, 'sharp');
insert into public.tool_labels values (1, 1), (1, 2), (2, 2), (2, 3);
create view public.post_feed as select id, body as text, handle as writer from public.posts;
create view public.people_directory as select handle as who, upper(nickname) as shout from public.people;
create view public.directory_page as select who from public.people_directory;
grant select on public.post_feed, public.people_directory, public.directory_page to anon;
grant all on all tables in schema public to service_role;
grant select on public.people, public.rooms, public.room_settings, public.posts, public.pairings,
  public.folders, public.tools, public.labels, public.tool_labels to anon;
`;

let lib: Library;
let anon: SupabaseClient;
let aggregates: TestServer;
let agg: SupabaseClient;

beforeAll(async () => {
  lib = await startLibrary(EMBEDS_SQL);
  anon = lib.server.client();
  aggregates = await startTestServer({ DATABASE_URL: lib.databaseUrl, DATA_API_AGGREGATES_ENABLED: 'true' });
  agg = aggregates.client();
});
afterAll(async () => {
  await aggregates?.close();
  await lib?.close();
});

describe('naming the relationship', () => {
  test('by foreign-key column: a to-one object under the column name or an alias', async () => {
    const { data, error } = await anon
      .from('posts')
      .select('id, handle(nickname), writer:handle(handle)')
      .in('id', [1, 3])
      .order('id');
    expect(error).toBeNull();
    expect(data).toEqual([
      { id: 1, handle: { nickname: 'Ada' }, writer: { handle: 'ada' } },
      { id: 3, handle: { nickname: 'Bobby' }, writer: { handle: 'bob' } },
    ]);
  });

  test('by constraint name, as the target or as a hint, and by column hints on either side', async () => {
    const { data, error } = await anon
      .from('pairings')
      .select(
        'id, lead:people!pairings_lead_fkey(nickname), partner:pairings_partner_fkey(nickname), spare:people!spare(nickname)',
      )
      .order('id');
    expect(error).toBeNull();
    expect(data).toEqual([
      { id: 1, lead: { nickname: 'Ada' }, partner: { nickname: 'Bobby' }, spare: null },
      { id: 2, lead: { nickname: 'Bobby' }, partner: { nickname: null }, spare: { nickname: 'Ada' } },
    ]);
    const reverse = await anon
      .from('people')
      .select('handle, leads:pairings!lead(id), partners:pairings!pairings_partner_fkey(id)')
      .eq('handle', 'bob');
    expect(reverse.error).toBeNull();
    expect(reverse.data).toEqual([{ handle: 'bob', leads: [{ id: 2 }], partners: [{ id: 1 }] }]);
  });

  test('ambiguous: 300 PGRST201 with every candidate in details and the hint PostgREST writes', async () => {
    const res = await anon.from('pairings').select('id, people(nickname)');
    expect(res.status).toBe(300);
    expect(res.error).toEqual({
      code: 'PGRST201',
      message: "Could not embed because more than one relationship was found for 'pairings' and 'people'",
      details: [
        {
          cardinality: 'many-to-one',
          embedding: 'pairings with people',
          relationship: 'pairings_lead_fkey using pairings(lead) and people(handle)',
        },
        {
          cardinality: 'many-to-one',
          embedding: 'pairings with people',
          relationship: 'pairings_partner_fkey using pairings(partner) and people(handle)',
        },
        {
          cardinality: 'many-to-one',
          embedding: 'pairings with people',
          relationship: 'pairings_spare_fkey using pairings(spare) and people(handle)',
        },
      ],
      hint: "Try changing 'people' to one of the following: 'people!pairings_lead_fkey', 'people!pairings_partner_fkey', 'people!pairings_spare_fkey'. Find the desired relationship in the 'details' key.",
    });
    const reverse = await anon.from('people').select('pairings(id)');
    expect(reverse.status).toBe(300);
    expect((reverse.error?.details as unknown as { cardinality: string; relationship: string }[])[0]).toEqual(
      {
        cardinality: 'one-to-many',
        embedding: 'people with pairings',
        relationship: 'pairings_lead_fkey using people(handle) and pairings(lead)',
      },
    );
  });

  test('no relationship: 400 PGRST200 with PostgREST details, with and without a hint', async () => {
    const res = await anon.from('posts').select('id, tools(name)');
    expect(res.status).toBe(400);
    expect(res.error).toEqual({
      code: 'PGRST200',
      message: "Could not find a relationship between 'posts' and 'tools' in the schema cache",
      details:
        "Searched for a foreign key relationship between 'posts' and 'tools' in the schema 'public', but no matches were found.",
      hint: null,
    });
    const hinted = await anon.from('posts').select('id, people!nope(nickname)');
    expect(hinted.error).toMatchObject({
      code: 'PGRST200',
      details:
        "Searched for a foreign key relationship between 'posts' and 'people' using the hint 'nope' in the schema 'public', but no matches were found.",
    });
  });
});

describe('errors PostgreSQL would raise for PostgREST', () => {
  test('an unknown column in select is 42703, named as in the SQL PostgREST writes', async () => {
    const top = await anon.from('posts').select('id, nope');
    expect(top.status).toBe(400);
    expect(top.error).toEqual({
      code: '42703',
      message: 'column posts.nope does not exist',
      details: null,
      hint: null,
    });
    const embedded = await anon.from('people').select('handle, posts(likes, nope)');
    expect(embedded.error).toMatchObject({ code: '42703', message: 'column posts_1.nope does not exist' });
  });

  test('two embeds under one key are 400 42712', async () => {
    const res = await anon.from('pairings').select('people!lead(handle), people!partner(handle)');
    expect(res.status).toBe(400);
    expect(res.error).toMatchObject({
      code: '42712',
      message: 'table name "pairings_people_1" specified more than once',
    });
  });

  test('a missing relationship deep down is reported before the embedding depth', async () => {
    const res = await anon.from('people').select('posts(rooms(posts(nothing_here(id))))');
    expect(res.error).toMatchObject({ code: 'PGRST200' });
    const deep = await anon.from('people').select('posts(rooms(posts(handle(handle))))');
    expect(deep.error).toMatchObject({ code: 'PGRST100', message: 'Embedding is limited to 3 levels' });
  });
});

describe('shapes of relationships', () => {
  test('self-reference: the table name gives the children, the key column the parent', async () => {
    const { data, error } = await anon
      .from('folders')
      .select('title, parent_id(title), children:folders(title), kids:folders!parent_id(title)')
      .in('id', [1, 2])
      .order('id')
      .order('id', { referencedTable: 'children' });
    expect(error).toBeNull();
    expect(data).toEqual([
      {
        title: 'root',
        parent_id: null,
        children: [{ title: 'docs' }, { title: 'music' }],
        kids: expect.arrayContaining([{ title: 'docs' }, { title: 'music' }]),
      },
      {
        title: 'docs',
        parent_id: { title: 'root' },
        children: [{ title: 'drafts' }],
        kids: [{ title: 'drafts' }],
      },
    ]);
  });

  test('one-to-one: an object from both ends when the key is the primary key', async () => {
    const rooms = await anon.from('rooms').select('name, room_settings(topic)').order('id');
    expect(rooms.error).toBeNull();
    expect(rooms.data).toEqual([
      { name: 'general', room_settings: { topic: 'Everything' } },
      { name: 'random', room_settings: { topic: null } },
      { name: 'empty', room_settings: null },
    ]);
    const settings = await anon.from('room_settings').select('topic, rooms(name)').eq('id', 1);
    expect(settings.data).toEqual([{ topic: 'Everything', rooms: { name: 'general' } }]);
  });

  test('many-to-many through the junction, also named as a hint, with !inner and embedded order', async () => {
    const { data, error } = await anon
      .from('tools')
      .select('name, labels(name)')
      .order('id')
      .order('name', { referencedTable: 'labels' });
    expect(error).toBeNull();
    expect(data).toEqual([
      { name: 'hammer', labels: [{ name: 'metal' }, { name: 'wood' }] },
      { name: 'saw', labels: [{ name: 'metal' }, { name: 'sharp' }] },
      { name: 'glue', labels: [] },
    ]);
    const back = await anon
      .from('labels')
      .select('name, tools!tool_labels!inner(name)')
      .eq('tools.name', 'saw')
      .order('id');
    expect(back.error).toBeNull();
    expect(back.data).toEqual([
      { name: 'metal', tools: [{ name: 'saw' }] },
      { name: 'sharp', tools: [{ name: 'saw' }] },
    ]);
  });

  test('!inner inside an embed narrows that embed, and through it the parents', async () => {
    const { data, error } = await anon
      .from('folders')
      .select('title, children:folders!inner(title, grandchildren:folders!inner(title))')
      .order('id');
    expect(error).toBeNull();
    expect(data).toEqual([
      { title: 'root', children: [{ title: 'docs', grandchildren: [{ title: 'drafts' }] }] },
    ]);
    const left = await anon
      .from('folders')
      .select('title, children:folders(title, grandchildren:folders!inner(title))')
      .eq('id', 1);
    expect(left.data).toEqual([
      { title: 'root', children: [{ title: 'docs', grandchildren: [{ title: 'drafts' }] }] },
    ]);
  });

  test('!inner and !left, rel.limit and rel.offset', async () => {
    const inner = await anon.from('rooms').select('name, posts!inner(id)').order('id');
    expect(inner.data?.map((r) => r.name)).toEqual(['general', 'random']);
    const left = await anon.from('rooms').select('name, posts!left(id)').order('id');
    expect(left.data?.map((r) => r.name)).toEqual(['general', 'random', 'empty']);
    const paged = await anon
      .from('people')
      .select('handle, posts(id)')
      .eq('handle', 'ada')
      .order('id', { referencedTable: 'posts' })
      .range(1, 1, { referencedTable: 'posts' });
    expect(paged.error).toBeNull();
    expect(paged.data).toEqual([{ handle: 'ada', posts: [{ id: 2 }] }]);
  });
});

describe('through views', () => {
  test('view columns are traced to the keys of their tables, on either end and view to view', async () => {
    const fromView = await anon
      .from('post_feed')
      .select('id, people(nickname), people_directory(shout)')
      .in('id', [1, 3])
      .order('id');
    expect(fromView.error).toBeNull();
    expect(fromView.data).toEqual([
      { id: 1, people: { nickname: 'Ada' }, people_directory: { shout: 'ADA' } },
      { id: 3, people: { nickname: 'Bobby' }, people_directory: { shout: 'BOBBY' } },
    ]);
    const toView = await anon.from('people').select('handle, post_feed(id)').eq('handle', 'bob');
    expect(toView.error).toBeNull();
    expect(toView.data).toEqual([{ handle: 'bob', post_feed: [{ id: 3 }] }]);
    const viewOfView = await anon.from('post_feed').select('id, directory_page(who)').eq('id', 3);
    expect(viewOfView.error).toBeNull();
    expect(viewOfView.data).toEqual([{ id: 3, directory_page: { who: 'bob' } }]);
    const byColumn = await anon.from('post_feed').select('id, writer(nickname)').eq('id', 2);
    expect(byColumn.data).toEqual([{ id: 2, writer: { nickname: 'Ada' } }]);
  });

  test('a view column computed from others has no origin and links nothing', async () => {
    const res = await anon.from('people_directory').select('who, post_feed(id)').eq('who', 'bob');
    expect(res.error).toBeNull();
    expect(res.data).toEqual([{ who: 'bob', post_feed: [{ id: 3 }] }]);
    const none = await anon.from('posts').select('id, people_directory!shout(who)');
    expect(none.error?.code).toBe('PGRST200');
  });
});

describe('ordering by a to-one embed', () => {
  test('order=rel(col) sorts parents by the embedded row', async () => {
    const { data, error } = await anon
      .from('posts')
      .select('id, author:handle(nickname)')
      .order('author(nickname)', { ascending: false })
      .order('id');
    expect(error).toBeNull();
    expect(data?.map((p) => p.id)).toEqual([3, 1, 2, 4]);
  });

  test('not embedded: 400 PGRST108; to-many: 400 PGRST118', async () => {
    const missing = await lib.rest('/posts?select=id&order=people(nickname)');
    expect(missing.status).toBe(400);
    expect(missing.json).toMatchObject({ code: 'PGRST108' });
    const many = await lib.rest('/people?select=handle,posts(id)&order=posts(id)');
    expect(many.status).toBe(400);
    expect(many.json).toEqual({
      code: 'PGRST118',
      message: "A related order on 'posts' is not possible",
      details: "'people' and 'posts' do not form a many-to-one or one-to-one relationship",
      hint: null,
    });
  });
});

describe('spread', () => {
  test('...to-one merges the columns into the parent; ...to-many gives arrays', async () => {
    const one = await anon.from('posts').select('id, ...handle(nick:nickname)').in('id', [1, 3]).order('id');
    expect(one.error).toBeNull();
    expect(one.data).toEqual([
      { id: 1, nick: 'Ada' },
      { id: 3, nick: 'Bobby' },
    ]);
    const nested = await anon.from('posts').select('id, rooms(name, ...room_settings(topic))').eq('id', 1);
    expect(nested.data).toEqual([{ id: 1, rooms: { name: 'general', topic: 'Everything' } }]);
    const many = await anon
      .from('rooms')
      .select('room:id, ...posts(id, body)')
      .order('id')
      .order('id', { referencedTable: 'posts' });
    expect(many.error).toBeNull();
    expect(many.data).toEqual([
      { room: 1, id: [1, 3, 4], body: ['Hello world', 'Bob was here', 'Ada again'] },
      { room: 2, id: [2], body: ['Second post'] },
      { room: 3, id: [], body: [] },
    ]);
  });
});

describe('computed fields and relationships', () => {
  test('a function of the row is a column in select, filters and order', async () => {
    const { data, error } = await anon
      .from('posts')
      .select('id, excerpt, short:excerpt')
      .like('excerpt', 'Hello%')
      .order('excerpt');
    expect(error).toBeNull();
    expect(data).toEqual([{ id: 1, excerpt: 'Hello', short: 'Hello' }]);
    const ordered = await anon.from('posts').select('id').order('excerpt', { ascending: false });
    expect(ordered.data?.map((p) => p.id)).toEqual([2, 1, 3, 4]);
  });

  test('a write returning a computed field or relationship gets them too', async () => {
    const admin = lib.server.adminClient();
    const { data, error } = await admin
      .from('posts')
      .insert({ id: 9, body: 'Written now', handle: 'cy', room_id: 3 })
      .select('id, excerpt, poster(handle)');
    expect(error).toBeNull();
    expect(data).toEqual([{ id: 9, excerpt: 'Writt', poster: { handle: 'cy' } }]);
    const upserted = await admin
      .from('posts')
      .upsert({ id: 9, body: 'Rewritten', handle: 'cy', room_id: 3 })
      .select('id, excerpt');
    expect(upserted.error).toBeNull();
    expect(upserted.data).toEqual([{ id: 9, excerpt: 'Rewri' }]);
    const removed = await admin.from('posts').delete().eq('excerpt', 'Rewri').select('id');
    expect(removed.data).toEqual([{ id: 9 }]);
  });

  test('a function returning rows of another table embeds like a relationship', async () => {
    const many = await anon.from('people').select('handle, popular_posts(id)').order('handle');
    expect(many.error).toBeNull();
    expect(many.data).toEqual([
      { handle: 'ada', popular_posts: [{ id: 1 }] },
      { handle: 'bob', popular_posts: [{ id: 3 }] },
      { handle: 'cy', popular_posts: [] },
    ]);
    const one = await anon.from('posts').select('id, poster(nickname), room_of(name)').eq('id', 3);
    expect(one.error).toBeNull();
    // `returns setof … rows 1` promises one row: an object, like `returns <table>`.
    expect(one.data).toEqual([{ id: 3, poster: { nickname: 'Bobby' }, room_of: { name: 'general' } }]);
  });
});

describe('aggregates', () => {
  test('off by default: 400 PGRST123; the older rel(count) still works', async () => {
    const res = await anon.from('posts').select('likes.sum()');
    expect(res.status).toBe(400);
    expect(res.error).toEqual({
      code: 'PGRST123',
      message: 'Use of aggregate functions is not allowed',
      details: null,
      hint: null,
    });
    const count = await anon.from('posts').select('count()');
    expect(count.error?.code).toBe('PGRST123');
    // Only inside an embed: at the top level `count` is a column name like any other.
    const bare = await lib.rest('/posts?select=count');
    expect(bare.json).toMatchObject({ code: '42703', message: 'column posts.count does not exist' });
    const legacy = await anon.from('people').select('handle, posts(count)').order('handle');
    expect(legacy.error).toBeNull();
    expect(legacy.data).toEqual([
      { handle: 'ada', posts: [{ count: 3 }] },
      { handle: 'bob', posts: [{ count: 1 }] },
      { handle: 'cy', posts: [{ count: 0 }] },
    ]);
  });

  test('count, sum, avg, min, max grouped by the other columns, with aliases and casts', async () => {
    const { data, error } = await agg
      .from('posts')
      .select('handle, count(), total:likes.sum(), likes.avg()::int, likes.min(), top:likes.max()::text')
      .order('handle');
    expect(error).toBeNull();
    expect(data).toEqual([
      { handle: 'ada', count: 3, total: 15, avg: 5, min: 0, top: '12' },
      { handle: 'bob', count: 1, total: 20, avg: 20, min: 20, top: '20' },
    ]);
    const all = await agg.from('posts').select('count(), likes.sum()').gt('likes', 1);
    expect(all.data).toEqual([{ count: 3, sum: 35 }]);
  });

  test('on embedded resources, to-many and to-one', async () => {
    const { data, error } = await agg
      .from('people')
      .select('handle, posts(likes.sum(), n:count())')
      .order('handle');
    expect(error).toBeNull();
    expect(data).toEqual([
      { handle: 'ada', posts: [{ sum: 15, n: 3 }] },
      { handle: 'bob', posts: [{ sum: 20, n: 1 }] },
      { handle: 'cy', posts: [{ sum: null, n: 0 }] },
    ]);
    const toOne = await agg.from('posts').select('id, rooms(count(), ...room_settings(topic))').eq('id', 1);
    expect(toOne.error).toBeNull();
    expect(toOne.data).toEqual([{ id: 1, rooms: { count: 1, topic: 'Everything' } }]);
  });
});

describe('hostile input', () => {
  test.each([
    ['hint with SQL', '/posts?select=id,people!x%3Bdrop(nickname)'],
    ['relation with a quote', '/posts?select=id,"people\'--"(nickname)'],
    ['aggregate of an expression', '/posts?select=likes%2B1.sum()'],
    ['unknown aggregate', '/posts?select=likes.stddev()'],
    ['sum without a column', '/posts?select=sum()'],
    ['aggregate cast with SQL', '/posts?select=likes.sum()::int%3Bdrop'],
    ['related order with SQL', '/posts?select=id,handle(nickname)&order=handle(nickname%3Bdrop)'],
    ['spread of a column', '/posts?select=...body'],
  ])('%s: 400, never a 500', async (_, path) => {
    for (const server of [lib.server, aggregates]) {
      const res = await fetch(`${server.url}/rest/v1${path}`, {
        headers: { apikey: server.config.projectApiKey },
      });
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.status, path).toBeLessThan(500);
    }
  });

  test('a quoted relation that does not exist is PGRST200 and tables still answer', async () => {
    const res = await lib.rest('/posts?select=id,"people;drop table posts"(nickname)');
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: 'PGRST200' });
    const still = await anon.from('posts').select('id').order('id');
    expect(still.data?.length).toBe(4);
  });
});
