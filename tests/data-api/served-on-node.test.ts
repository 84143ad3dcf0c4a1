// /rest/v1 is served on node:http directly, with reads planned once per request shape. What must
// not change with that: a cached plan answers each caller with that caller's rows only (row-level
// security applies in the database, also once PostgreSQL settles on a generic plan); the headers
// that negotiate a read give it its own plan; a schema change is seen; every API header is the
// same as on the Hono-served APIs; bodies keep their size cap.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { withService } from '../../src/server/db/transactions.js';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';

let server: TestServer;
let alice: SignedIn;
let bob: SignedIn;

beforeAll(async () => {
  server = await startTestServer();
  alice = await signUp(server, 'alice');
  bob = await signUp(server, 'bob');
  for (const [owner, label] of [
    [alice, 'Alice'],
    [bob, 'Bob'],
  ] as const) {
    const id = await workspace(server, owner, `${label} works`);
    const { error } = await owner.client
      .from('projects')
      .insert([1, 2, 3].map((n) => ({ workspace_id: id, name: `${label} ${n}` })));
    if (error) throw new Error(error.message);
  }
});
afterAll(async () => server?.close());

const LIST = '/rest/v1/projects?select=name&order=name.asc';
const bearer = (who: SignedIn) => ({ authorization: `Bearer ${who.accessToken}` });

test('the same read, alternating callers, answers each with their own rows only', async () => {
  // More rounds than PostgreSQL's five custom plans before it may choose a generic one.
  for (let round = 0; round < 8; round++) {
    const [a, b, anon] = await Promise.all([
      call(server, 'GET', LIST, { headers: bearer(alice) }),
      call(server, 'GET', LIST, { headers: bearer(bob) }),
      call(server, 'GET', LIST),
    ]);
    expect(a.body).toEqual([{ name: 'Alice 1' }, { name: 'Alice 2' }, { name: 'Alice 3' }]);
    expect(b.body).toEqual([{ name: 'Bob 1' }, { name: 'Bob 2' }, { name: 'Bob 3' }]);
    // The anonymous role may not read projects at all.
    expect(anon.status).toBe(401);
    expect(anon.body).toMatchObject({ code: '42501' });
  }
});

test('headers that negotiate a read give it its own plan', async () => {
  const plain = await call(server, 'GET', `${LIST}&limit=1`, { headers: bearer(alice) });
  expect(plain.headers.get('content-range')).toBe('0-0/*');
  const counted = await call(server, 'GET', `${LIST}&limit=1`, {
    headers: { ...bearer(alice), prefer: 'count=exact' },
  });
  expect(counted.status).toBe(206);
  expect(counted.headers.get('content-range')).toBe('0-0/3');
  const object = await call(server, 'GET', `${LIST}&limit=1`, {
    headers: { ...bearer(alice), accept: 'application/vnd.pgrst.object+json' },
  });
  expect(object.body).toEqual({ name: 'Alice 1' });
  const ranged = await call(server, 'GET', LIST, { headers: { ...bearer(alice), range: '1-1' } });
  expect(ranged.body).toEqual([{ name: 'Alice 2' }]);
  const again = await call(server, 'GET', `${LIST}&limit=1`, { headers: bearer(alice) });
  expect(again.body).toEqual([{ name: 'Alice 1' }]);
});

test('a column added after a read was planned is seen', async () => {
  const before = await call(server, 'GET', '/rest/v1/projects?select=name,color&limit=1', {
    headers: bearer(alice),
  });
  expect(before.status).toBe(400);
  await withService(server.pool, async (tx) => {
    await tx.query("alter table public.projects add column color text not null default 'teal'");
  });
  // The schema cache reloads on a miss; the planned read is made again for the new schema.
  let after = await call(server, 'GET', '/rest/v1/projects?select=name,color&limit=1', {
    headers: bearer(alice),
  });
  for (let i = 0; i < 20 && after.status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 250));
    after = await call(server, 'GET', '/rest/v1/projects?select=name,color&limit=1', {
      headers: bearer(alice),
    });
  }
  expect(after.status).toBe(200);
  expect(after.body).toEqual([{ name: expect.stringMatching(/^Alice/), color: 'teal' }]);
});

test('a /rest/v1 answer carries the same API headers as a Hono-served /auth/v1 answer', async () => {
  const list = await call(server, 'GET', LIST, { headers: { ...bearer(alice), 'x-request-id': 'list-7' } });
  const health = await call(server, 'GET', '/auth/v1/health');
  expect(list.headers.get('x-request-id')).toBe('list-7');
  const isApiHeader = (name: string) =>
    /^(x-(?!request-id)|strict-transport-security|referrer-policy|origin-agent-cluster|cross-origin-|permissions-policy|access-control-)/.test(
      name,
    );
  const names = (headers: Headers) => [...headers.keys()].filter(isApiHeader).sort();
  expect(names(list.headers)).toEqual(names(health.headers));
  expect(names(list.headers).length).toBeGreaterThanOrEqual(10);
  for (const name of names(health.headers)) expect(list.headers.get(name)).toBe(health.headers.get(name));
});

/** A raw request, so the body can be chunked or lie about its length. */
function rawPost(path: string, headers: Record<string, string>, chunks: Buffer[]) {
  return new Promise<{ status: number; body: string; connection: string | undefined }>((resolve, reject) => {
    const url = new URL(server.url + path);
    const req = httpRequest({ host: url.hostname, port: url.port, path, method: 'POST', headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }));
    });
    req.on('error', (error: NodeJS.ErrnoException) =>
      // The server may close once it has answered a body it will not read.
      error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error),
    );
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

test('bodies over the cap are refused with 413, declared or chunked, and nothing is written', async () => {
  const headers = {
    apikey: server.config.projectApiKey,
    ...bearer(alice),
    'content-type': 'application/json',
  };
  const big = Buffer.from(JSON.stringify({ name: 'x'.repeat(1024 * 1024), workspace_id: alice.id }));
  const declared = await rawPost('/rest/v1/projects', { ...headers, 'content-length': String(big.length) }, [
    big,
  ]);
  expect(declared.status).toBe(413);
  const chunks = Array.from({ length: 20 }, () => Buffer.alloc(64 * 1024, 0x20));
  const chunked = await rawPost('/rest/v1/projects', { ...headers, 'transfer-encoding': 'chunked' }, chunks);
  expect(chunked.status).toBe(413);
  expect(chunked.connection).toBe('close');
  const count = await withService(server.pool, (tx) =>
    tx.query<{ n: number }>("select count(*)::int as n from public.projects where name like 'xxx%'"),
  );
  expect(count.rows[0]!.n).toBe(0);
});
