// Paging of the service-role user list: supabase-js's listUsers() with no arguments sends
// `?page=&per_page=`, which means GoTrue's defaults (page 1, 50 per page); garbage is refused.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  // 60 users, enough for a second page at 50 per page.
  await server.pool.query(
    `insert into auth.users (email) select 'paged' || n || '@example.com' from generate_series(1, 60) n`,
  );
});
afterAll(async () => server?.close());

const service = () => ({ authorization: `Bearer ${server.config.serviceRoleKey}` });

test('listUsers() with no arguments answers the first page of 50', async () => {
  const admin = server.adminClient().auth.admin;
  const { data, error } = await admin.listUsers();
  expect(error).toBeNull();
  expect(data.users).toHaveLength(50);
  const paging = data as unknown as { total: number; nextPage: number | null };
  expect(paging.total).toBeGreaterThanOrEqual(60);
  expect(paging.nextPage).toBe(2);
  const second = await admin.listUsers({ page: 2 });
  expect(second.error).toBeNull();
  expect(second.data.users.length).toBeGreaterThanOrEqual(10);
  const seen = new Set(data.users.map((u) => u.id));
  expect(second.data.users.some((u) => seen.has(u.id))).toBe(false);
});

test('with no users, the last page is 0, as GoTrue counts it', async () => {
  const empty = await startTestServer();
  try {
    const { data, error } = await empty.adminClient().auth.admin.listUsers();
    expect(error).toBeNull();
    expect(data).toMatchObject({ users: [], total: 0, lastPage: 0, nextPage: null });
  } finally {
    await empty.close();
  }
});

test('empty parameters are the defaults', async () => {
  const res = await call(server, 'GET', '/auth/v1/admin/users?page=&per_page=', { headers: service() });
  expect(res.status).toBe(200);
  expect(res.body.users as unknown[]).toHaveLength(50);
});

test('garbage is refused with 400 naming the parameter', async () => {
  for (const query of [
    'page=abc',
    'page=0',
    'page=-1',
    'page=1.5',
    'page=0x10',
    'per_page=1e2',
    'per_page=0',
  ]) {
    const res = await call(server, 'GET', `/auth/v1/admin/users?${query}`, { headers: service() });
    expect(res.status, query).toBe(400);
    expect(res.body.error_code).toBe('validation_failed');
    expect(res.body.msg).toMatch(query.split('=')[0]!);
  }
});

test('per_page is capped at 1000, and the Link header pages by the cap', async () => {
  const res = await call(server, 'GET', '/auth/v1/admin/users?per_page=5000', { headers: service() });
  expect(res.status).toBe(200);
  expect((res.body.users as unknown[]).length).toBeLessThanOrEqual(1000);
  expect(res.headers.get('link')).toContain('per_page=1000');
});

test('a page past the end is empty, not an error', async () => {
  const res = await call(server, 'GET', '/auth/v1/admin/users?page=999999999&per_page=1000', {
    headers: service(),
  });
  expect(res.status).toBe(200);
  expect(res.body.users).toEqual([]);
});
