// Raw HTTP checks of /auth/v1: every status code and body the interface spec and GoTrue define,
// including the bad-input cases, and that a refused request changes nothing.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

let counter = 0;
const uniqueEmail = () => `http${++counter}-${Date.now()}@example.com`;

async function signUp(email = uniqueEmail(), password = 'correct horse battery') {
  const res = await call(server, 'POST', '/auth/v1/signup', { body: { email, password } });
  expect(res.status).toBe(200);
  return {
    email,
    password,
    body: res.body as Record<string, unknown> & { refresh_token: string; access_token: string },
  };
}

async function userCount(): Promise<number> {
  const r = await server.pool.query<{ n: string }>('select count(*) as n from auth.users');
  return Number(r.rows[0]!.n);
}

describe('apikey', () => {
  test.each([
    ['missing', null],
    ['unknown', 'not-a-project-key-at-all-000000'],
  ])('%s apikey is 401 on every route', async (_label, apikey) => {
    for (const [method, path] of [
      ['GET', '/auth/v1/health'],
      ['GET', '/auth/v1/settings'],
      ['POST', '/auth/v1/token?grant_type=password'],
      ['GET', '/auth/v1/user'],
      ['GET', '/auth/v1/admin/users'],
    ] as const) {
      const res = await call(server, method, path, { apikey, body: method === 'POST' ? {} : undefined });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body.error_code).toBe('invalid_api_key');
    }
  });

  test('the JWKS document is public and lists no symmetric keys', async () => {
    const res = await call(server, 'GET', '/auth/v1/.well-known/jwks.json', { apikey: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ keys: [] });
    expect(res.headers.get('cache-control')).toBe('public, max-age=600');
  });

  test('health and settings', async () => {
    const health = await call(server, 'GET', '/auth/v1/health');
    expect(health.status).toBe(200);
    expect(health.body.name).toBe('GoTrue');
    const settings = await call(server, 'GET', '/auth/v1/settings');
    expect(settings.body).toMatchObject({
      disable_signup: false,
      mailer_autoconfirm: true,
      external: { email: true, phone: false, anonymous_users: expect.any(Boolean) },
    });
    // Every member GoTrue's settings carry, so a client reading one never meets undefined.
    expect(Object.keys(settings.body).sort()).toEqual(
      [
        'disable_signup',
        'external',
        'mailer_autoconfirm',
        'passkeys_enabled',
        'phone_autoconfirm',
        'saml_enabled',
        'saml_private_key_next_configured',
        'sms_provider',
      ].sort(),
    );
  });

  test('a served path asked with another method: 405 with Allow, as GoTrue; an unknown path: 404', async () => {
    for (const [method, path, allow] of [
      ['POST', '/auth/v1/settings', 'GET'],
      ['DELETE', '/auth/v1/signup', 'POST'],
      ['GET', '/auth/v1/token?grant_type=password', 'POST'],
      ['PATCH', '/auth/v1/user', 'GET, PUT'],
      ['POST', `/auth/v1/admin/users/${crypto.randomUUID()}`, 'GET, PUT, DELETE'],
      // A fixed path is also served by the pattern beside it (DELETE /user/identities/:id).
      ['POST', '/auth/v1/user/identities/authorize', 'GET, DELETE'],
      // GoTrue's router does not answer HEAD with GET.
      ['HEAD', '/auth/v1/settings', 'GET'],
    ] as const) {
      const res = await call(server, method, path);
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.text).toBe('');
      expect(res.headers.get('allow')?.split(', ').sort(), `${method} ${path}`).toEqual(
        allow.split(', ').sort(),
      );
    }
    // The apikey is checked first, as the gateway does before the router.
    expect((await call(server, 'POST', '/auth/v1/settings', { apikey: null })).status).toBe(401);
    const unknown = await call(server, 'GET', '/auth/v1/no-such-endpoint');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: 404, error_code: 'not_found' });
    expect((await call(server, 'HEAD', '/auth/v1/no-such-endpoint')).status).toBe(404);
  });

  test('a HEAD on an e-mail link does not spend it (a link scanner may send one)', async () => {
    const email = `head-${Date.now()}@example.com`;
    const admin = server.adminClient().auth.admin;
    const created = await admin.createUser({ email, email_confirm: true });
    expect(created.error).toBeNull();
    const { data, error } = await admin.generateLink({ type: 'magiclink', email });
    expect(error).toBeNull();
    const properties = data.properties!;
    const link = new URL(properties.action_link);
    const path = `${link.pathname}${link.search}`;
    const head = await call(server, 'HEAD', path, { apikey: null });
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'POST']);
    const { error: verifyError } = await server
      .client()
      .auth.verifyOtp({ token_hash: properties.hashed_token, type: 'magiclink' });
    expect(verifyError).toBeNull();
  });
});

describe('POST /token?grant_type=password (spec 4.1)', () => {
  test('success returns the token response', async () => {
    const { email, password } = await signUp();
    const res = await call(server, 'POST', '/auth/v1/token?grant_type=password', {
      body: { email, password },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    expect(typeof res.body.access_token).toBe('string');
    expect(typeof res.body.refresh_token).toBe('string');
    expect(res.body.expires_at).toBeGreaterThan(Date.now() / 1000 + 3500);
    expect((res.body.user as { email: string }).email).toBe(email);
  });

  test('invalid credentials: 400 invalid_grant with the fields auth-js reads', async () => {
    const { email } = await signUp();
    const wrong = await call(server, 'POST', '/auth/v1/token?grant_type=password', {
      body: { email, password: 'wrong password' },
    });
    const unknown = await call(server, 'POST', '/auth/v1/token?grant_type=password', {
      body: { email: uniqueEmail(), password: 'wrong password' },
    });
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        code: 400,
        error_code: 'invalid_credentials',
        msg: 'Invalid login credentials',
        error: 'invalid_grant',
        error_description: 'Invalid login credentials',
      });
    }
  });

  test.each([
    ['missing password', { email: 'a@example.com' }],
    ['missing email', { password: 'x' }],
    ['email not a string', { email: 42, password: 'x' }],
    ['password not a string', { email: 'a@example.com', password: ['x'] }],
    ['body is an array', [1, 2]],
    ['no body', undefined],
  ])('%s: 400', async (_label, body) => {
    const res = await call(server, 'POST', '/auth/v1/token?grant_type=password', { body });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(typeof res.body.error_description).toBe('string');
  });

  test('malformed JSON: 400 bad_json', async () => {
    const res = await call(server, 'POST', '/auth/v1/token?grant_type=password', {
      rawBody: '{"email": "a@',
    });
    expect(res.status).toBe(400);
    expect(res.body.error_code).toBe('bad_json');
  });

  test('a body over 1 MB: 413, and nothing is written', async () => {
    const before = await userCount();
    const big = JSON.stringify({ email: uniqueEmail(), password: 'x'.repeat(1024 * 1024) });
    const res = await call(server, 'POST', '/auth/v1/signup', { rawBody: big });
    expect(res.status).toBe(413);
    expect(await userCount()).toBe(before);
  });

  test('unknown or missing grant_type: 400', async () => {
    for (const path of ['/auth/v1/token?grant_type=client_credentials', '/auth/v1/token']) {
      const res = await call(server, 'POST', path, { body: {} });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('unsupported_grant_type');
    }
  });
});

describe('POST /token?grant_type=refresh_token (spec 4.2)', () => {
  test('success returns a new pair', async () => {
    const { body } = await signUp();
    const res = await call(server, 'POST', '/auth/v1/token?grant_type=refresh_token', {
      body: { refresh_token: body.refresh_token },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    expect(res.body.refresh_token).not.toBe(body.refresh_token);
  });

  test.each([
    ['unknown token', { refresh_token: 'abcdefghijklmnopqrstuvwxyz012345' }, 'refresh_token_not_found'],
    ['malformed token', { refresh_token: 'short' }, 'validation_failed'],
    ['missing token', {}, 'validation_failed'],
    ['wrong type', { refresh_token: 12345678901234 }, 'validation_failed'],
  ])('%s: 400', async (_label, body, code) => {
    const res = await call(server, 'POST', '/auth/v1/token?grant_type=refresh_token', { body });
    expect(res.status).toBe(400);
    expect(res.body.error_code).toBe(code);
    expect(typeof res.body.error).toBe('string');
  });

  test('an expired refresh token: 400 invalid_grant', async () => {
    const { body } = await signUp();
    await server.pool.query(`update auth.sessions set refresh_rotated_at = now() - interval '400 days'`);
    const res = await call(server, 'POST', '/auth/v1/token?grant_type=refresh_token', {
      body: { refresh_token: body.refresh_token },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
  });
});

describe('signup', () => {
  test('invalid e-mail: 400; weak password: 422; duplicate: 422; nothing written', async () => {
    const before = await userCount();
    const invalid = await call(server, 'POST', '/auth/v1/signup', {
      body: { email: 'not-an-email', password: 'long enough pw' },
    });
    expect(invalid.status).toBe(400);
    const weak = await call(server, 'POST', '/auth/v1/signup', {
      body: { email: uniqueEmail(), password: 'short' },
    });
    expect(weak.status).toBe(422);
    expect(weak.body.weak_password).toEqual({ reasons: ['length'] });
    expect(await userCount()).toBe(before);
    const { email } = await signUp();
    const duplicate = await call(server, 'POST', '/auth/v1/signup', {
      body: { email, password: 'long enough pw' },
    });
    expect(duplicate.status).toBe(422);
    expect(duplicate.body.error_code).toBe('user_already_exists');
    expect(await userCount()).toBe(before + 1);
  });

  test('injection-looking input is just data', async () => {
    const email = `o'brien+${Date.now()}@example.com`;
    const res = await call(server, 'POST', '/auth/v1/signup', {
      body: { email, password: "'; drop table auth.users; --", data: { name: "Robert'); DROP TABLE x;--" } },
    });
    expect(res.status).toBe(200);
    const signIn = await call(server, 'POST', '/auth/v1/token?grant_type=password', {
      body: { email, password: "'; drop table auth.users; --" },
    });
    expect(signIn.status).toBe(200);
  });
});

describe('GET/PUT /user and logout', () => {
  test('no token, malformed header, garbage token: 401', async () => {
    const none = await call(server, 'GET', '/auth/v1/user');
    expect(none.status).toBe(401);
    expect(none.body.error_code).toBe('no_authorization');
    const malformed = await call(server, 'GET', '/auth/v1/user', { headers: { authorization: 'Basic abc' } });
    expect(malformed.status).toBe(401);
    const garbage = await call(server, 'GET', '/auth/v1/user', {
      headers: { authorization: 'Bearer abc.def.ghi' },
    });
    expect(garbage.status).toBe(401);
    expect(garbage.body.error_code).toBe('bad_jwt');
    expect(garbage.headers.get('www-authenticate')).toContain('invalid_token');
  });

  test('PUT /user refuses app_metadata from the user (403) and bad types (400)', async () => {
    const { body } = await signUp();
    const auth = { authorization: `Bearer ${body.access_token}` };
    const admin = await call(server, 'PUT', '/auth/v1/user', {
      headers: auth,
      body: { app_metadata: { role: 'x' } },
    });
    expect(admin.status).toBe(403);
    expect(admin.body).toMatchObject({
      error_code: 'not_admin',
      msg: 'Updating app_metadata requires admin privileges',
    });
    const badType = await call(server, 'PUT', '/auth/v1/user', {
      headers: auth,
      body: { data: 'not an object' },
    });
    expect(badType.status).toBe(400);
  });

  test('logout scopes: local ends one session, others keeps the current, global ends all', async () => {
    const { email, password } = await signUp();
    const signIn = async () =>
      (await call(server, 'POST', '/auth/v1/token?grant_type=password', { body: { email, password } }))
        .body as {
        access_token: string;
        refresh_token: string;
      };
    const refreshWorks = async (token: string) =>
      (
        await call(server, 'POST', '/auth/v1/token?grant_type=refresh_token', {
          body: { refresh_token: token },
        })
      ).status === 200;
    const [a, b, c] = [await signIn(), await signIn(), await signIn()];

    const bad = await call(server, 'POST', '/auth/v1/logout?scope=everything', {
      headers: { authorization: `Bearer ${a.access_token}` },
    });
    expect(bad.status).toBe(400);

    const local = await call(server, 'POST', '/auth/v1/logout?scope=local', {
      headers: { authorization: `Bearer ${a.access_token}` },
    });
    expect(local.status).toBe(204);
    expect(local.text).toBe('');
    expect(await refreshWorks(a.refresh_token)).toBe(false);
    expect(await refreshWorks(b.refresh_token)).toBe(true);

    const d = await signIn();
    const others = await call(server, 'POST', '/auth/v1/logout?scope=others', {
      headers: { authorization: `Bearer ${d.access_token}` },
    });
    expect(others.status).toBe(204);
    expect(await refreshWorks(c.refresh_token)).toBe(false);
    expect(await refreshWorks(d.refresh_token)).toBe(true);

    const e = await signIn();
    const global = await call(server, 'POST', '/auth/v1/logout', {
      headers: { authorization: `Bearer ${e.access_token}` },
    });
    expect(global.status).toBe(204);
    const sessions = await server.pool.query(
      'select 1 from auth.sessions s join auth.users u on u.id = s.user_id where u.email = $1',
      [email],
    );
    expect(sessions.rowCount).toBe(0);
  });
});

describe('admin routes', () => {
  test('anon key: 403 not_admin; service key: allowed; bad id: 400; unknown id: 404', async () => {
    const anon = await call(server, 'GET', '/auth/v1/admin/users');
    expect(anon.status).toBe(403);
    expect(anon.body.error_code).toBe('not_admin');
    const service = { authorization: `Bearer ${server.config.serviceRoleKey}` };
    const list = await call(server, 'GET', '/auth/v1/admin/users?page=1&per_page=2', { headers: service });
    expect(list.status).toBe(200);
    expect(Number(list.headers.get('x-total-count'))).toBeGreaterThan(0);
    expect((list.body.users as unknown[]).length).toBeLessThanOrEqual(2);
    const badId = await call(server, 'GET', '/auth/v1/admin/users/not-a-uuid', { headers: service });
    expect(badId.status).toBe(400);
    const unknown = await call(server, 'GET', `/auth/v1/admin/users/${crypto.randomUUID()}`, {
      headers: service,
    });
    expect(unknown.status).toBe(404);
  });

  test('invite creates an unconfirmed user with invited_at and no password', async () => {
    const email = uniqueEmail();
    const service = { authorization: `Bearer ${server.config.serviceRoleKey}` };
    const res = await call(server, 'POST', '/auth/v1/invite', { headers: service, body: { email } });
    expect(res.status).toBe(200);
    expect(res.body.invited_at).toBeTruthy();
    expect(res.body.email_confirmed_at).toBeUndefined();
    const signIn = await call(server, 'POST', '/auth/v1/token?grant_type=password', {
      body: { email, password: 'anything at all' },
    });
    expect(signIn.status).toBe(400);
    const asAnon = await call(server, 'POST', '/auth/v1/invite', { body: { email: uniqueEmail() } });
    expect(asAnon.status).toBe(403);
  });
});
