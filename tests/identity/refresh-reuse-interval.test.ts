// The parent of the active refresh token (a client that lost the previous response) gets the
// same child again only within the reuse interval (REFRESH_TOKEN_REUSE_INTERVAL, GoTrue's 10 s);
// after it, presenting the parent is reuse, and reuse ends the whole session.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadConfig } from '../../src/server/config.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let quick: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  quick = await startTestServer({ REFRESH_TOKEN_REUSE_INTERVAL: '1' });
});
afterAll(async () => {
  await server?.close();
  await quick?.close();
});

let counter = 0;
async function signedIn(on: TestServer) {
  const supabase = on.client();
  const { data, error } = await supabase.auth.signUp({
    email: `reuse${++counter}-${Date.now()}@example.com`,
    password: 'correct horse battery',
  });
  expect(error).toBeNull();
  return { supabase, session: data.session! };
}

test('within the interval the parent gets the same child; 20 s later it is reuse and ends the session', async () => {
  const { supabase, session } = await signedIn(server);
  const parent = session.refresh_token;
  const first = await supabase.auth.refreshSession({ refresh_token: parent });
  expect(first.error).toBeNull();
  const child = first.data.session!.refresh_token;

  const retry = await server.client().auth.refreshSession({ refresh_token: parent });
  expect(retry.error).toBeNull();
  expect(retry.data.session?.refresh_token).toBe(child);

  // The parent was rotated 20 seconds ago.
  await server.pool.query(
    `update auth.sessions set refresh_rotated_at = refresh_rotated_at - interval '20 seconds'
     where refresh_parent_hash = sha256(convert_to($1, 'utf8'))`,
    [parent],
  );
  const late = await server.client().auth.refreshSession({ refresh_token: parent });
  expect(late.error?.status).toBe(400);
  expect(late.error?.code).toBe('refresh_token_already_used');
  // Treated as theft: the whole session is gone, the legitimate child and access tokens too.
  const holder = await server.client().auth.refreshSession({ refresh_token: child });
  expect(holder.error?.status).toBe(400);
  const user = await server.client().auth.getUser(first.data.session!.access_token);
  expect(user.error?.name).toBe('AuthSessionMissingError'); // what auth-js makes of session_not_found
  const sessions = await server.pool.query('select 1 from auth.sessions where user_id = $1', [
    session.user.id,
  ]);
  expect(sessions.rowCount).toBe(0);
});

test('REFRESH_TOKEN_REUSE_INTERVAL sets the interval', async () => {
  const { supabase, session } = await signedIn(quick);
  const first = await supabase.auth.refreshSession({ refresh_token: session.refresh_token });
  expect(first.error).toBeNull();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const late = await quick.client().auth.refreshSession({ refresh_token: session.refresh_token });
  expect(late.error?.code).toBe('refresh_token_already_used');
  const holder = await quick.client().auth.refreshSession({
    refresh_token: first.data.session!.refresh_token,
  });
  expect(holder.error?.status).toBe(400);
});

test('a bad REFRESH_TOKEN_REUSE_INTERVAL stops start-up naming the variable', async () => {
  for (const value of ['-1', 'ten', '1.5', '3601']) {
    await expect(
      loadConfig({ DATA_DIR: '/tmp/tenantry-config-test', REFRESH_TOKEN_REUSE_INTERVAL: value }),
    ).rejects.toThrow(/REFRESH_TOKEN_REUSE_INTERVAL/);
  }
});
