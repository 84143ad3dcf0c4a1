// Access-token claims and rejection of forged tokens; refresh-token rotation, the parent rule,
// reuse detection and revocation.
import { createHash } from 'node:crypto';
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

let counter = 0;
type Tokens = { access_token: string; refresh_token: string; user: { id: string; email: string } };

async function newSession(): Promise<Tokens> {
  const email = `tok${++counter}-${Date.now()}@example.com`;
  const res = await call(server, 'POST', '/auth/v1/signup', {
    body: { email, password: 'correct horse battery', data: { plan: 'x' } },
  });
  expect(res.status).toBe(200);
  return res.body as unknown as Tokens;
}

const refresh = (token: string) =>
  call(server, 'POST', '/auth/v1/token?grant_type=refresh_token', { body: { refresh_token: token } });
const getUser = (token: string) =>
  call(server, 'GET', '/auth/v1/user', { headers: { authorization: `Bearer ${token}` } });
const secretKey = () => new TextEncoder().encode(server.config.jwtSecret);

describe('access token', () => {
  test('carries the Supabase claims and lives exactly 3600 s', async () => {
    const session = await newSession();
    expect(decodeProtectedHeader(session.access_token)).toEqual({ alg: 'HS256', typ: 'JWT' });
    const claims = decodeJwt(session.access_token);
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect(claims).toMatchObject({
      iss: `${server.config.authUrl}/auth/v1`,
      sub: session.user.id,
      aud: 'authenticated',
      role: 'authenticated',
      email: session.user.email,
      phone: '',
      app_metadata: { provider: 'email', providers: ['email'] },
      user_metadata: { plan: 'x' },
      aal: 'aal1',
      is_anonymous: false,
    });
    expect(typeof claims.session_id).toBe('string');
    expect(claims.amr).toEqual([{ method: 'password', timestamp: expect.any(Number) }]);
    expect(Math.abs(claims.iat! - Date.now() / 1000)).toBeLessThan(5);
    expect((await getUser(session.access_token)).status).toBe(200);
  });

  test('alg none is rejected', async () => {
    const session = await newSession();
    const [, payload] = session.access_token.split('.');
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const res = await getUser(`${header}.${payload}.`);
    expect(res.status).toBe(401);
    expect(res.body.error_code).toBe('bad_jwt');
  });

  test('a token signed with another key is rejected', async () => {
    const session = await newSession();
    const forged = await new SignJWT(decodeJwt(session.access_token))
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('some-other-secret-that-is-long-enough-0000'));
    const res = await getUser(forged);
    expect(res.status).toBe(401);
    expect(res.body.msg).toContain('signature');
  });

  test('an expired token is rejected', async () => {
    const session = await newSession();
    const claims = decodeJwt(session.access_token);
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ ...claims, iat: now - 7200, exp: now - 3600 })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(secretKey());
    const res = await getUser(expired);
    expect(res.status).toBe(401);
    expect(res.body.msg).toContain('expired');
  });

  test('a tampered payload is rejected', async () => {
    const session = await newSession();
    const [header, payload, signature] = session.access_token.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    claims.sub = crypto.randomUUID();
    const tampered = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
    expect((await getUser(tampered)).status).toBe(401);
  });

  // GoTrue's JWT_ADMIN_ROLES: a token signed with our key that names service_role or
  // supabase_admin is an admin, with or without an expiry; anything else signed by us is not.
  const adminToken = async (claims: Record<string, unknown>, expiresIn?: number, key = secretKey()) => {
    const now = Math.floor(Date.now() / 1000);
    const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt(now);
    if (expiresIn !== undefined) jwt.setExpirationTime(now + expiresIn);
    return jwt.sign(key);
  };
  const listUsers = async (token: string) =>
    (await call(server, 'GET', '/auth/v1/admin/users', { headers: { authorization: `Bearer ${token}` } }))
      .status;

  test('a token we signed that names service_role or supabase_admin acts as the service role', async () => {
    expect(await listUsers(await adminToken({ role: 'service_role' }, 60))).toBe(200);
    expect(await listUsers(await adminToken({ role: 'supabase_admin', sub: '1234567890' }))).toBe(200);
  });

  test('admin-role tokens that are expired, forged or name another role are refused', async () => {
    expect(await listUsers(await adminToken({ role: 'service_role' }, -10))).toBe(401);
    const forged = await adminToken({ role: 'service_role' }, 60, new TextEncoder().encode('x'.repeat(40)));
    expect(await listUsers(forged)).toBe(401);
    expect(await listUsers(await adminToken({ role: 'postgres' }, 60))).toBe(401);
    expect(await listUsers(await adminToken({ role: 'anon' }, 60))).toBe(401);
    // A real user's access token is a user, not an admin.
    const session = await newSession();
    expect(await listUsers(session.access_token)).toBe(403);
  });
});

describe('refresh rotation', () => {
  test('each refresh revokes the presented token and issues a child', async () => {
    const session = await newSession();
    const first = await refresh(session.refresh_token);
    expect(first.status).toBe(200);
    const child = first.body.refresh_token as string;
    expect(child).not.toBe(session.refresh_token);
    const second = await refresh(child);
    expect(second.status).toBe(200);
    expect(decodeJwt(second.body.access_token as string).session_id).toBe(
      decodeJwt(session.access_token).session_id,
    );
  });

  test('re-presenting the parent of the current token returns the current child', async () => {
    const session = await newSession();
    const first = await refresh(session.refresh_token);
    const again = await refresh(session.refresh_token);
    expect(again.status).toBe(200);
    expect(again.body.refresh_token).toBe(first.body.refresh_token);
    // and the child still works afterwards
    expect((await refresh(first.body.refresh_token as string)).status).toBe(200);
  });

  test('concurrent refreshes of one token all receive the same child', async () => {
    const session = await newSession();
    const results = await Promise.all(Array.from({ length: 8 }, () => refresh(session.refresh_token)));
    const children = new Set(results.map((r) => r.body.refresh_token));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(children.size).toBe(1);
  });

  test('reusing an older revoked token revokes the whole session', async () => {
    const session = await newSession();
    const first = await refresh(session.refresh_token);
    const second = await refresh(first.body.refresh_token as string);
    expect(second.status).toBe(200);
    // The grandparent is not the parent of the active token: this is reuse.
    const reuse = await refresh(session.refresh_token);
    expect(reuse.status).toBe(400);
    expect(reuse.body.error_code).toBe('refresh_token_already_used');
    expect(reuse.body.error).toBe('invalid_grant');
    // The legitimate holder's current token is now dead too, and so is the session.
    const current = await refresh(second.body.refresh_token as string);
    expect(current.status).toBe(400);
    expect((await getUser(second.body.access_token as string)).status).toBe(401);
  });

  test('logout revokes refresh tokens', async () => {
    const session = await newSession();
    const out = await call(server, 'POST', '/auth/v1/logout', {
      headers: { authorization: `Bearer ${session.access_token}` },
    });
    expect(out.status).toBe(204);
    const res = await refresh(session.refresh_token);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
  });

  test('refresh tokens are stored only as hashes', async () => {
    const session = await newSession();
    const rows = await server.pool.query<{ token_hash: Buffer }>(
      'select refresh_token_hash as token_hash from auth.sessions where refresh_token_hash is not null',
    );
    expect(rows.rows.length).toBeGreaterThan(0);
    const raw = Buffer.from(session.refresh_token);
    const secret = Buffer.from(session.refresh_token.slice(-20));
    expect(
      rows.rows.some(
        (r) => r.token_hash.equals(raw) || r.token_hash.includes(raw) || r.token_hash.includes(secret),
      ),
    ).toBe(false);
    expect(rows.rows.some((r) => r.token_hash.equals(createHash('sha256').update(raw).digest()))).toBe(true);
  });
});
