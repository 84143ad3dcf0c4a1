// The data API's refusals over raw HTTP: keys and tokens, unknown names, internal schemas, and a
// battery of malformed and injection-shaped queries that must all be clean 4xx answers.
import { SignJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';

let server: TestServer;
let user: SignedIn;

beforeAll(async () => {
  server = await startTestServer();
  user = await signUp(server, 'errors');
  await workspace(server, user, 'Errors');
});
afterAll(async () => server?.close());

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/rest/v1${path}`, {
    headers: { apikey: server.config.projectApiKey, authorization: `Bearer ${user.accessToken}`, ...headers },
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : null,
    headers: res.headers,
  };
}

describe('keys and tokens', () => {
  test('missing or unknown apikey: 401', async () => {
    const res = await fetch(`${server.url}/rest/v1/projects`);
    expect(res.status).toBe(401);
    const wrong = await get('/projects', { apikey: 'not-the-key-at-all-0000000' });
    expect(wrong.status).toBe(401);
  });

  test('a bad token: 401 PGRST301 with WWW-Authenticate; expired: PGRST303', async () => {
    const bad = await get('/projects', { authorization: 'Bearer not.a.jwt' });
    expect(bad.status).toBe(401);
    expect(bad.body).toMatchObject({ code: 'PGRST301' });
    expect(bad.headers.get('www-authenticate')).toContain('invalid_token');
    const claims = decodeJwt(user.accessToken);
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ ...claims, iat: now - 7200, exp: now - 60 })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(server.config.jwtSecret));
    const res = await get('/projects', { authorization: `Bearer ${expired}` });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'PGRST303', message: 'JWT expired' });
  });

  test('anonymous reads of tenant tables are 401', async () => {
    const res = await get('/projects', { authorization: `Bearer ${server.config.projectApiKey}` });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: '42501' });
  });
});

describe('what is exposed', () => {
  test('unknown tables 404 PGRST205; internal and auth schemas are invisible', async () => {
    for (const path of [
      '/nope',
      '/users',
      '/rate_limits',
      '/outbox',
      '/invitation_tokens',
      '/schema_migrations',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.body).toMatchObject({ code: 'PGRST205' });
    }
    const profile = await get('/users', { 'accept-profile': 'auth' });
    expect(profile.status).toBe(406);
    expect(profile.body).toMatchObject({ code: 'PGRST106' });
  });

  test('an unknown column is 400; an unknown relationship is 400 PGRST200', async () => {
    expect((await get('/projects?select=secret')).status).toBe(400);
    const rel = await get('/projects?select=*,activity_events(*)');
    expect(rel.status).toBe(400);
    expect(rel.body).toMatchObject({ code: 'PGRST200' });
  });
});

describe('malformed and hostile queries are clean 400s', () => {
  const cases: [string, string][] = [
    ['unknown operator', '/projects?name=regex.x'],
    ['no operator', '/projects?name=Apollo'],
    ['quote in column name', `/projects?na"me=eq.1`],
    ['injection in column', '/projects?name;drop%20table%20projects=eq.1'],
    ['injection in order', '/projects?order=name;drop%20table%20projects'],
    ['bad order modifier', '/projects?order=name.sideways'],
    ['unbalanced or', '/projects?or=(name.eq.a,name.eq.b'],
    ['empty or', '/projects?or=()'],
    ['bad is value', '/projects?description=is.maybe'],
    ['in without parentheses', '/projects?name=in.a,b'],
    ['unterminated quote', '/projects?or=(name.eq."abc)'],
    ['bad select', '/projects?select=name,,id'],
    ['unsupported cast', '/projects?select=name::pg_catalog.text'],
    ['malformed json path', '/projects?select=name->'],
    ['unknown operator', '/projects?name=eqq.x'],
    ['bad limit', '/projects?limit=-1'],
    ['non-numeric offset', '/projects?offset=ten'],
    ['wrong type value', '/projects?id=eq.not-a-uuid'],
    ['deep nesting', `/projects?or=${'('.repeat(12)}name.eq.a${')'.repeat(12)}`],
    ['filter on a non-embedded relation', '/projects?workspaces.name=eq.x'],
  ];
  test.each(cases)('%s', async (_label, path) => {
    const res = await get(path);
    expect(res.status).toBe(400);
    expect(typeof res.body?.code).toBe('string');
    expect(typeof res.body?.message).toBe('string');
  });

  test('values are data, never SQL', async () => {
    const res = await get(`/projects?name=eq.${encodeURIComponent("x' or '1'='1")}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
    const like = await get(`/projects?name=like.${encodeURIComponent("%' or 1=1 --")}`);
    expect(like.body).toEqual([]);
    const long = await get(`/projects?name=eq.${'x'.repeat(8_000)}`);
    expect(long.status).toBe(200);
    // Past the HTTP server's request-line limit the request is refused before any SQL runs.
    const huge = await get(`/projects?name=eq.${'x'.repeat(50_000)}`);
    expect(huge.status).toBe(431);
    const tables = await server.pool.query(`select 1 from pg_tables where tablename = 'projects'`);
    expect(tables.rowCount).toBe(1);
  });

  test('malformed JSON body is 400 PGRST102; a body over 1 MB is 413', async () => {
    const headers = {
      apikey: server.config.projectApiKey,
      authorization: `Bearer ${user.accessToken}`,
      'content-type': 'application/json',
    };
    const bad = await fetch(`${server.url}/rest/v1/projects`, { method: 'POST', headers, body: '{"name": ' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe('PGRST102');
    const scalar = await fetch(`${server.url}/rest/v1/projects`, { method: 'POST', headers, body: '42' });
    expect(scalar.status).toBe(400);
    const big = await fetch(`${server.url}/rest/v1/projects`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'x'.repeat(1024 * 1024) }),
    });
    expect(big.status).toBe(413);
  });
});
