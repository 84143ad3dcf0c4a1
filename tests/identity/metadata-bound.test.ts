// A user's metadata is bounded (METADATA_MAX_BYTES, 4096 by default) on every path that writes
// it: sign-up data, anonymous sign-up data, e-mail sign-in (otp) data, PUT /user data (including
// a merge that grows past the bound), the admin API's user_metadata and app_metadata on create
// and update, invitations, generated links, and a provider's profile at sign-in. Each refusal is
// GoTrue's 400 validation_failed naming the field, and changes nothing. Without autoconfirm a
// registered address and a new one get the same answer.
import { createClient } from '@supabase/supabase-js';
import ws from 'ws';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { syncAppSettings } from '../../src/server/settings.js';
import { followToApp, startStandInProvider, type StandInProvider } from '../support/oidc-provider.js';
import { call, startTestServer, type TestServer } from '../support/server.js';

const PASSWORD = 'correct horse battery';
const SITE = 'https://app.example.com';
// The service's public address; the tests reach it at server.url, as a reverse proxy would.
const AUTH = 'https://auth.example.com';
/** A little over the default bound of 4096 bytes. */
const big = (key = 'bio') => ({ [key]: 'x'.repeat(4200) });

let server: TestServer;
let confirming: TestServer;
let provider: StandInProvider;
let counter = 0;
const newEmail = () => `meta${++counter}-${Date.now()}@example.com`;
const admin = (target = server) => ({ authorization: `Bearer ${target.config.serviceRoleKey}` });

beforeAll(async () => {
  provider = await startStandInProvider();
  server = await startTestServer({
    ENABLE_ANONYMOUS_SIGN_INS: 'true',
    SITE_URL: SITE,
    AUTH_URL: AUTH,
    ...provider.env(),
  });
  confirming = await startTestServer({ AUTH_AUTOCONFIRM: 'false' });
});
afterAll(async () => {
  await server?.close();
  await confirming?.close();
  await provider?.close();
});

async function users(email: string, target = server): Promise<number> {
  const r = await target.pool.query('select count(*)::int as n from auth.users where email = $1', [email]);
  return r.rows[0].n as number;
}

async function metadataOf(id: string) {
  const r = await server.pool.query(
    'select raw_user_meta_data as user, raw_app_meta_data as app from auth.users where id = $1',
    [id],
  );
  return r.rows[0] as { user: Record<string, unknown>; app: Record<string, unknown> };
}

function expectRefused(res: { status: number; body: Record<string, unknown> }, field: string) {
  expect(res.status).toBe(400);
  expect(res.body.error_code).toBe('validation_failed');
  expect(res.body.msg).toMatch(new RegExp(`^${field} is too large: at most 4096 bytes`));
}

async function signedUp(data: Record<string, unknown> = { name: 'Ada' }) {
  const email = newEmail();
  const res = await call(server, 'POST', '/auth/v1/signup', { body: { email, password: PASSWORD, data } });
  expect(res.status).toBe(200);
  return { email, token: res.body.access_token as string, id: (res.body.user as { id: string }).id };
}

describe('metadata over the bound is refused wherever it is written', () => {
  test('sign-up data: 400, no account', async () => {
    const email = newEmail();
    const res = await call(server, 'POST', '/auth/v1/signup', {
      body: { email, password: PASSWORD, data: big() },
    });
    expectRefused(res, 'user_metadata');
    expect(await users(email)).toBe(0);
    // Just under the bound is accepted, and the token carries it.
    const ok = await signedUp({ bio: 'x'.repeat(4000) });
    expect(
      JSON.parse(Buffer.from(ok.token.split('.')[1]!, 'base64url').toString()).user_metadata.bio,
    ).toHaveLength(4000);
  });

  test('without autoconfirm a registered address and a new one get the same refusal', async () => {
    const registered = newEmail();
    expect(
      (await call(confirming, 'POST', '/auth/v1/signup', { body: { email: registered, password: PASSWORD } }))
        .status,
    ).toBe(200);
    await confirming.pool.query('update auth.users set email_confirmed_at = now() where email = $1', [
      registered,
    ]);
    const fresh = newEmail();
    for (const email of [registered, fresh]) {
      const res = await call(confirming, 'POST', '/auth/v1/signup', {
        body: { email, password: PASSWORD, data: big() },
      });
      expectRefused(res, 'user_metadata');
      const otp = await call(confirming, 'POST', '/auth/v1/otp', {
        body: { email, create_user: true, data: big() },
      });
      expectRefused(otp, 'user_metadata');
    }
    expect(await users(fresh, confirming)).toBe(0);
  });

  test('anonymous sign-up data and e-mail sign-in data: 400, no account', async () => {
    const before = await server.pool.query('select count(*)::int as n from auth.users where is_anonymous');
    expectRefused(await call(server, 'POST', '/auth/v1/signup', { body: { data: big() } }), 'user_metadata');
    const after = await server.pool.query('select count(*)::int as n from auth.users where is_anonymous');
    expect(after.rows[0].n).toBe(before.rows[0].n);
    const email = newEmail();
    expectRefused(
      await call(server, 'POST', '/auth/v1/otp', { body: { email, create_user: true, data: big() } }),
      'user_metadata',
    );
    expect(await users(email)).toBe(0);
  });

  test('PUT /user data: 400 and unchanged, also when a merge would grow past the bound', async () => {
    const { token, id } = await signedUp();
    const headers = { authorization: `Bearer ${token}` };
    const before = (await metadataOf(id)).user;
    expectRefused(
      await call(server, 'PUT', '/auth/v1/user', { headers, body: { data: big() } }),
      'user_metadata',
    );
    expect((await metadataOf(id)).user).toEqual(before);
    // Each half fits; together they do not. The first is kept, the second refused.
    const half = (key: string) => ({ [key]: 'y'.repeat(2500) });
    expect((await call(server, 'PUT', '/auth/v1/user', { headers, body: { data: half('a') } })).status).toBe(
      200,
    );
    expectRefused(
      await call(server, 'PUT', '/auth/v1/user', { headers, body: { data: half('b') } }),
      'user_metadata',
    );
    expect(Object.keys((await metadataOf(id)).user).sort()).toEqual(['a', ...Object.keys(before)].sort());
    // A password change alongside oversized data changes nothing either.
    expectRefused(
      await call(server, 'PUT', '/auth/v1/user', {
        headers,
        body: { password: 'another horse battery', data: half('b') },
      }),
      'user_metadata',
    );
    const signIn = await call(server, 'POST', '/auth/v1/token?grant_type=password', {
      body: {
        email: (await server.pool.query('select email from auth.users where id = $1', [id])).rows[0].email,
        password: PASSWORD,
      },
    });
    expect(signIn.status).toBe(200);
  });

  test('the admin API: user_metadata and app_metadata on create and update', async () => {
    for (const field of ['user_metadata', 'app_metadata'] as const) {
      const email = newEmail();
      const res = await call(server, 'POST', '/auth/v1/admin/users', {
        headers: admin(),
        body: { email, password: PASSWORD, [field]: big() },
      });
      expectRefused(res, field);
      expect(await users(email)).toBe(0);
    }
    const { id } = await signedUp();
    const before = await metadataOf(id);
    for (const field of ['user_metadata', 'app_metadata'] as const) {
      const res = await call(server, 'PUT', `/auth/v1/admin/users/${id}`, {
        headers: admin(),
        body: { [field]: big() },
      });
      expectRefused(res, field);
    }
    expect(await metadataOf(id)).toEqual(before);
  });

  test('invitations and generated links: 400, no account', async () => {
    const invited = newEmail();
    expectRefused(
      await call(server, 'POST', '/auth/v1/invite', {
        headers: admin(),
        body: { email: invited, data: big() },
      }),
      'user_metadata',
    );
    expect(await users(invited)).toBe(0);
    const linked = newEmail();
    expectRefused(
      await call(server, 'POST', '/auth/v1/admin/generate_link', {
        headers: admin(),
        body: { type: 'signup', email: linked, password: PASSWORD, data: big() },
      }),
      'user_metadata',
    );
    expect(await users(linked)).toBe(0);
  });

  test("a provider's profile that would not fit: the sign-in is refused with the reason, no account", async () => {
    const email = newEmail();
    provider.person = { sub: `big-${Date.now()}`, email, email_verified: true, name: 'n'.repeat(5000) };
    const client = createClient(server.url, server.config.projectApiKey, {
      auth: { flowType: 'pkce', persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
      realtime: { transport: ws as unknown as typeof WebSocket },
    });
    const { data } = await client.auth.signInWithOAuth({
      provider: 'google',
      options: { redirectTo: `${SITE}/auth/callback`, skipBrowserRedirect: true },
    });
    const landing = await followToApp(data.url!, SITE, { publicOrigin: AUTH, realOrigin: server.url });
    expect(landing.searchParams.get('error_code')).toBe('validation_failed');
    expect(landing.searchParams.get('error_description')).toMatch(/^user_metadata is too large/);
    expect(await users(email)).toBe(0);
  });

  test('the bound is METADATA_MAX_BYTES, written into the database at start', async () => {
    await syncAppSettings(server.pool, { appUrl: server.url, maxMetadataBytes: 512 });
    try {
      const res = await call(server, 'POST', '/auth/v1/signup', {
        body: { email: newEmail(), password: PASSWORD, data: { bio: 'z'.repeat(600) } },
      });
      expect(res.status).toBe(400);
      expect(res.body.msg).toMatch(/^user_metadata is too large: at most 512 bytes/);
    } finally {
      await syncAppSettings(server.pool, { appUrl: server.url, maxMetadataBytes: 4096 });
    }
  });
});
