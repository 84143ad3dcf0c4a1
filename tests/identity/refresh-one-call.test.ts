// The refresh grant is one statement on the pool (one round trip, one commit), and what that one
// call returns is the same session and user the rest of the service sees: the user rendered as
// GET /user renders it, the session's own aal, and a refused grant (banned user) changes nothing.
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { statementsDuring } from '../support/statements.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

let counter = 0;
async function signedUp() {
  const email = `one-call${++counter}-${Date.now()}@example.com`;
  const res = await call(server, 'POST', '/auth/v1/signup', {
    body: { email, password: 'correct horse battery', data: { name: 'Ada "q" \\ ✓' } },
  });
  expect(res.status).toBe(200);
  return res.body as { access_token: string; refresh_token: string; user: { id: string } };
}
const refresh = (token: string) =>
  call(server, 'POST', '/auth/v1/token?grant_type=refresh_token', { body: { refresh_token: token } });

test('a refresh grant is one statement on one connection, outside any explicit transaction', async () => {
  const session = await signedUp();
  // Every statement any checked-out connection runs while the grant is served.
  const sent = await statementsDuring(server.pool, async () => {
    const res = await refresh(session.refresh_token);
    expect(res.status).toBe(200);
  });
  const statements = sent.map((s) => s.text.replace(/\s+/g, ' '));
  // The grant, and the user's factors (migration 0040) and the session's OAuth client (0099) read
  // beside it in the same statement.
  expect(statements).toEqual([
    "select g.*, auth.user_factors_json((g.session ->> 'user_id')::uuid) as factors, (select s.oauth_client_id from auth.sessions s where s.id = (g.session ->> 'id')::uuid) as oauth_client_id from auth.refresh_grant($1, $2, $3, $4, $5, $6, $7, $8) g",
  ]);
});

test('the user in the response is the user GET /user renders; the token carries the session row', async () => {
  const session = await signedUp();
  await server.pool.query(`update auth.sessions set aal = 'aal2' where user_id = $1`, [session.user.id]);
  await server.pool.query(
    `update auth.users set banned_until = now() - interval '1 day', invited_at = '2024-02-29T12:34:56.789123Z'
     where id = $1`,
    [session.user.id],
  );
  const res = await refresh(session.refresh_token);
  expect(res.status).toBe(200);
  const fresh = res.body as { access_token: string; user: Record<string, unknown> };
  expect(decodeJwt(fresh.access_token)).toMatchObject({ aal: 'aal2', sub: session.user.id });
  const user = await call(server, 'GET', '/auth/v1/user', {
    headers: { authorization: `Bearer ${fresh.access_token}` },
  });
  expect(user.status).toBe(200);
  expect(fresh.user).toEqual(user.body);
  expect(fresh.user.invited_at).toBe('2024-02-29T12:34:56.789Z');
  expect(fresh.user.user_metadata).toEqual({ name: 'Ada "q" \\ ✓', email_verified: true });
});

test('a banned user is refused and nothing changes: the token stays live, no grant is counted', async () => {
  const session = await signedUp();
  await server.pool.query(`update auth.users set banned_until = now() + interval '1 day' where id = $1`, [
    session.user.id,
  ]);
  const res = await refresh(session.refresh_token);
  expect(res.status).toBe(400);
  expect(res.body.error_code ?? res.body.code).toBe('user_banned');
  expect(res.body.msg).toBe('Invalid Refresh Token: User Banned');
  // an access token issued before the ban no longer reads the user
  const me = await call(server, 'GET', '/auth/v1/user', {
    headers: { authorization: `Bearer ${session.access_token}` },
  });
  expect(me.status).toBe(403);
  expect(me.body).toMatchObject({ error_code: 'user_banned', msg: 'User is banned' });
  const token = await server.pool.query(
    `select 1 from auth.sessions where refresh_token_hash = sha256(convert_to($1, 'utf8'))`,
    [session.refresh_token],
  );
  expect(token.rowCount).toBe(1);
  const counted = await server.pool.query<{ refresh_count: number }>(
    'select refresh_count from auth.sessions where user_id = $1',
    [session.user.id],
  );
  expect(counted.rows).toEqual([{ refresh_count: 0 }]);
});
