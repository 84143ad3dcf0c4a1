// The schema cache against a real database: what it lists (public only, keys, relationships,
// callable functions), reloading on NOTIFY tenantry_schema, and on-demand refresh after a miss.
import { afterAll, beforeAll, expect, test } from 'vitest';
import pg from 'pg';
import { SchemaCache } from '../../src/server/data-api/schema-cache.js';
import { createPool, type Pool } from '../../src/server/db/pool.js';
import { createLogger } from '../../src/server/logger.js';
import { createTestDatabase } from '../support/server.js';
import { LIBRARY_SQL } from './library.js';

let pool: Pool;
let admin: pg.Client;
let cache: SchemaCache;

beforeAll(async () => {
  const url = await createTestDatabase();
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(LIBRARY_SQL);
  await admin.query(`
    create function public.on_change() returns trigger language plpgsql as $$ begin return new; end $$;
    create table public.linked (id integer primary key, user_id uuid references auth.users(id));`);
  pool = createPool(url, { max: 3 });
  cache = new SchemaCache(pool, createLogger('silent'));
});
afterAll(async () => {
  cache?.close();
  await pool?.end();
  await admin?.end();
});

test('lists public tables, keys and relationships only', async () => {
  const schema = await cache.get();
  expect([...schema.tables.keys()].sort()).toEqual(
    expect.arrayContaining(['authors', 'books', 'reviews', 'notes', 'secrets', 'tricky', 'linked']),
  );
  for (const hidden of ['hidden', 'users', 'sessions', 'schema_migrations']) {
    expect(schema.tables.has(hidden), hidden).toBe(false);
  }
  expect(schema.tables.get('reviews')!.primaryKey).toEqual(['book_id', 'reviewer']);
  expect(schema.tables.get('books')!.uniqueKeys).toEqual([['isbn']]);
  expect(schema.tables.get('books')!.columns.get('id')!.defaultExpression).toMatch(
    /^nextval\('.*books_id_seq.*'::regclass\)$/,
  );
  expect(
    schema.relationships
      .filter((r) => r.table === 'books')
      .map((r) => r.constraint)
      .sort(),
  ).toEqual(['books_author_id_fkey', 'books_editor_id_fkey']);
  // A foreign key into the auth schema is not a relationship clients can embed through.
  expect(schema.relationships.some((r) => r.table === 'linked')).toBe(false);
});

test('lists callable functions with arguments, volatility and result shape; not trigger functions', async () => {
  const schema = await cache.get();
  expect(schema.functions.has('on_change')).toBe(false);
  expect(schema.functions.get('greet')![0]).toMatchObject({
    args: [
      { name: 'name', type: 'text', hasDefault: false },
      { name: 'greeting', type: 'text', hasDefault: true },
    ],
    volatile: false,
    returnsSet: false,
  });
  expect(schema.functions.get('long_books')![0]).toMatchObject({
    returnsSet: true,
    returnColumns: [
      { name: 'title', type: 'text' },
      { name: 'pages', type: 'integer' },
    ],
  });
  expect(schema.functions.get('rename_author')![0]).toMatchObject({ volatile: true, returnsVoid: true });
  expect(schema.functions.get('echo')![0]).toMatchObject({ singleJsonArgument: true });
});

test('NOTIFY tenantry_schema reloads it', async () => {
  await cache.get();
  await admin.query(
    `create table public.announced (id integer primary key); select pg_notify('tenantry_schema', 'reload')`,
  );
  let found = false;
  for (let i = 0; i < 100 && !found; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    found = (await cache.get()).tables.has('announced');
  }
  expect(found).toBe(true);
});

test('without a notice, a miss refreshes it at most once a second', async () => {
  await admin.query(`create table public.unannounced (id integer primary key)`);
  await cache.reload();
  await admin.query(`create table public.unannounced2 (id integer primary key)`);
  expect(await cache.refreshAfterMiss()).toBeNull();
  await new Promise((resolve) => setTimeout(resolve, 1050));
  const fresh = await cache.refreshAfterMiss();
  expect(fresh?.tables.has('unannounced2')).toBe(true);
});
