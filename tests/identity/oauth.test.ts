// Sign-in with OAuth/OIDC providers through the real supabase-js client against a stand-in
// provider on real HTTP (discovery, JWKS, RS256 ID tokens): the PKCE and implicit round trips,
// linking by verified e-mail and by linkIdentity (bound to the browser that started it: by the
// PKCE verifier, or by a cookie without PKCE), unlinking, and the hostile cases (wrong or
// replayed state, mismatched verifiers, ID tokens with the wrong audience, issuer, nonce or
// signature, an unverified e-mail, a redirect_to that is not allowed).
import { randomBytes, randomUUID } from 'node:crypto';
import { createClient, type Provider, type SupabaseClient } from '@supabase/supabase-js';
import ws from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { followToApp, startStandInProvider, type StandInProvider } from '../support/oidc-provider.js';
import { call, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let provider: StandInProvider;
const SITE = 'https://app.example.com';
const CALLBACK = `${SITE}/auth/callback`;
const PASSWORD = 'correct horse battery';
// The service's public address; the tests reach it at server.url, as a reverse proxy would.
const AUTH = 'https://auth.example.com';

beforeAll(async () => {
  provider = await startStandInProvider();
  server = await startTestServer({
    SITE_URL: SITE,
    AUTH_URL: AUTH,
    SECURITY_MANUAL_LINKING_ENABLED: 'true',
    ...provider.env(),
    // The same stand-in as a generic OIDC issuer, found through its discovery document.
    EXTERNAL_OIDC_ENABLED: 'true',
    EXTERNAL_OIDC_CLIENT_ID: provider.clientId,
    EXTERNAL_OIDC_SECRET: provider.clientSecret,
    EXTERNAL_OIDC_URL: provider.url,
    EXTERNAL_OIDC_NAME: 'Acme SSO',
    // A GitLab that cannot be reached (nothing listens on port 1).
    EXTERNAL_GITLAB_ENABLED: 'true',
    EXTERNAL_GITLAB_CLIENT_ID: 'gitlab-client',
    EXTERNAL_GITLAB_SECRET: 'gitlab-secret',
    EXTERNAL_GITLAB_URL: 'http://127.0.0.1:1',
  });
});
afterAll(async () => {
  await server?.close();
  await provider?.close();
});
afterEach(() => {
  provider.tamper = {};
});

let counter = 0;
function newPerson(overrides: Partial<StandInProvider['person']> = {}) {
  counter += 1;
  provider.person = {
    sub: String(100000 + counter),
    email: `oauth${counter}-${Date.now()}@example.com`,
    email_verified: true,
    name: `Person ${counter}`,
    ...overrides,
  };
  return provider.person;
}

function client(flowType: 'pkce' | 'implicit' = 'pkce'): SupabaseClient {
  return createClient(server.url, server.config.projectApiKey, {
    auth: { flowType, persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    realtime: { transport: ws as unknown as typeof WebSocket },
  });
}

const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());
const publicToReal = (url: string) => (url.startsWith(AUTH) ? server.url + url.slice(AUTH.length) : url);
const toApp = (url: string) =>
  followToApp(publicToReal(url), SITE, { publicOrigin: AUTH, realOrigin: server.url });

async function startSignIn(
  c: SupabaseClient,
  provider: 'google' | 'github' = 'google',
  redirectTo = CALLBACK,
) {
  const { data, error } = await c.auth.signInWithOAuth({
    provider,
    options: { redirectTo, skipBrowserRedirect: true },
  });
  expect(error).toBeNull();
  return data.url!;
}

/** Follows the flow only as far as the provider's redirect back to /callback. */
async function callbackUrlFor(start: string): Promise<string> {
  const toProvider = await fetch(start, { redirect: 'manual' });
  expect(toProvider.status).toBe(302);
  const back = await fetch(toProvider.headers.get('location')!, { redirect: 'manual' });
  const location = back.headers.get('location')!;
  expect(location.startsWith(`${AUTH}/auth/v1/callback?`)).toBe(true);
  return publicToReal(location);
}

async function userCount(email: string): Promise<number> {
  const result = await server.pool.query('select count(*)::int as n from auth.users where email = $1', [
    email,
  ]);
  return result.rows[0].n as number;
}

function expectRefusal(landing: URL, code: string) {
  expect(landing.searchParams.get('error_code')).toBe(code);
  expect(landing.searchParams.get('error')).toBeTruthy();
  expect(landing.searchParams.get('error_description')).toBeTruthy();
  expect(new URLSearchParams(landing.hash.slice(1)).get('error_code')).toBe(code);
  expect(landing.searchParams.get('code')).toBeNull();
  expect(landing.hash).not.toContain('access_token');
}

describe('the PKCE round trip', () => {
  test('signInWithOAuth, the provider approves, exchangeCodeForSession signs in a new account', async () => {
    const person = newPerson();
    const c = client();
    const start = await startSignIn(c);
    expect(start).toContain('/auth/v1/authorize?provider=google');
    expect(start).toContain('code_challenge=');

    const landing = await toApp(start);
    expect(`${landing.origin}${landing.pathname}`).toBe(CALLBACK);
    const code = landing.searchParams.get('code')!;
    expect(code).toBeTruthy();

    // What was sent to the provider: our own state, nonce and PKCE, never the client's challenge.
    const sent = provider.lastAuthorization!;
    expect(sent.get('state')?.length).toBeGreaterThanOrEqual(32);
    expect(sent.get('nonce')).toBeTruthy();
    expect(sent.get('code_challenge_method')).toBe('S256');
    expect(new URL(start).searchParams.get('code_challenge')).not.toBe(sent.get('code_challenge'));
    expect(sent.get('redirect_uri')).toBe(`${server.config.authUrl}/auth/v1/callback`);
    expect(sent.get('scope')?.split(' ')).toEqual(expect.arrayContaining(['openid', 'email']));

    const { data, error } = await c.auth.exchangeCodeForSession(code);
    expect(error).toBeNull();
    const user = data.user!;
    expect(user.email).toBe(person.email);
    expect(user.email_confirmed_at).toBeTruthy();
    expect(user.app_metadata).toMatchObject({ provider: 'google', providers: ['google'] });
    expect(user.user_metadata).toMatchObject({ email: person.email, name: person.name, sub: person.sub });
    expect(claimsOf(data.session!.access_token).amr[0].method).toBe('oauth');

    const identities = await c.auth.getUserIdentities();
    expect(identities.error).toBeNull();
    expect(identities.data!.identities).toHaveLength(1);
    expect(identities.data!.identities[0]).toMatchObject({
      provider: 'google',
      id: person.sub,
      user_id: user.id,
      email: person.email,
      identity_data: { email: person.email, email_verified: true, sub: person.sub },
    });

    const stored = await server.pool.query('select email from auth.identities where user_id = $1', [user.id]);
    expect(stored.rows).toEqual([{ email: person.email }]);

    // The code works once.
    const again = await call(server, 'POST', '/auth/v1/token?grant_type=pkce', {
      body: { auth_code: code, code_verifier: 'v'.repeat(43) },
    });
    expect(again.status).toBe(404);
    expect(again.body.error_code).toBe('flow_state_not_found');
  });

  test('signing in again with the same identity opens a session for the same account', async () => {
    newPerson();
    const first = client();
    const one = await first.auth.exchangeCodeForSession(
      (await toApp(await startSignIn(first))).searchParams.get('code')!,
    );
    const second = client();
    const two = await second.auth.exchangeCodeForSession(
      (await toApp(await startSignIn(second))).searchParams.get('code')!,
    );
    expect(two.data.user!.id).toBe(one.data.user!.id);
    expect(two.data.session!.access_token).not.toBe(one.data.session!.access_token);
  });

  test('a verifier other than the one the client started with cannot exchange the code', async () => {
    newPerson();
    const alice = client();
    const code = (await toApp(await startSignIn(alice))).searchParams.get('code')!;
    const mallory = client();
    await startSignIn(mallory); // mallory's own verifier is now in her storage
    const stolen = await mallory.auth.exchangeCodeForSession(code);
    expect(stolen.error?.code).toBe('bad_code_verifier');
    expect(stolen.data.session).toBeNull();
    // The rightful client still can.
    const { error } = await alice.auth.exchangeCodeForSession(code);
    expect(error).toBeNull();
  });

  test('a generic OIDC issuer (EXTERNAL_OIDC_*) signs in like the named ones', async () => {
    const person = newPerson();
    const c = client();
    const { data: start } = await c.auth.signInWithOAuth({
      provider: 'oidc' as Provider,
      options: { redirectTo: CALLBACK, skipBrowserRedirect: true },
    });
    const landing = await toApp(start.url!);
    const { data, error } = await c.auth.exchangeCodeForSession(landing.searchParams.get('code')!);
    expect(error).toBeNull();
    expect(data.user!.email).toBe(person.email);
    expect(data.user!.app_metadata.provider).toBe('oidc');
  });

  test('GitHub: the user API says who signed in, and its verified primary e-mail', async () => {
    const person = newPerson();
    const c = client();
    const landing = await toApp(await startSignIn(c, 'github'));
    const { data, error } = await c.auth.exchangeCodeForSession(landing.searchParams.get('code')!);
    expect(error).toBeNull();
    expect(data.user!.email).toBe(person.email);
    expect(data.user!.identities![0]).toMatchObject({ provider: 'github', id: person.sub });
    expect(data.user!.user_metadata).toMatchObject({ user_name: 'standin' });
  });
});

test('the implicit flow lands with the session in the fragment', async () => {
  const person = newPerson();
  const c = client('implicit');
  const start = await startSignIn(c);
  expect(start).not.toContain('code_challenge');
  const landing = await toApp(start);
  expect(landing.searchParams.get('code')).toBeNull();
  const fragment = new URLSearchParams(landing.hash.slice(1));
  expect(fragment.get('token_type')).toBe('bearer');
  expect(fragment.get('provider_token')).toBeTruthy();
  expect(Number(fragment.get('expires_in'))).toBeGreaterThan(0);
  const { data, error } = await c.auth.setSession({
    access_token: fragment.get('access_token')!,
    refresh_token: fragment.get('refresh_token')!,
  });
  expect(error).toBeNull();
  expect(data.user!.email).toBe(person.email);
  const refreshed = await c.auth.refreshSession();
  expect(refreshed.error).toBeNull();
});

describe('state', () => {
  test('a state works once: replaying the callback is refused', async () => {
    newPerson();
    const c = client();
    const callback = await callbackUrlFor(await startSignIn(c));
    const first = await toApp(callback);
    expect(first.searchParams.get('code')).toBeTruthy();
    const replay = await toApp(callback);
    expect(replay.origin + replay.pathname).toBe(`${SITE}/`);
    expectRefusal(replay, 'bad_oauth_state');
  });

  test('a made-up or missing state is refused and signs no one in', async () => {
    const person = newPerson();
    const made = await toApp(`${server.url}/auth/v1/callback?code=anything&state=${randomUUID()}`);
    expectRefusal(made, 'bad_oauth_state');
    const missing = await toApp(`${server.url}/auth/v1/callback?code=anything`);
    expectRefusal(missing, 'bad_oauth_callback');
    expect(await userCount(person.email)).toBe(0);
  });

  test('a state that has expired is refused', async () => {
    newPerson();
    const callback = await callbackUrlFor(await startSignIn(client()));
    await server.pool.query(`update auth.oauth_states set created_at = now() - interval '11 minutes'`);
    expectRefusal(await toApp(callback), 'bad_oauth_state');
  });

  test('the state travels only as a hash', async () => {
    newPerson();
    const callback = await callbackUrlFor(await startSignIn(client()));
    const state = new URL(callback).searchParams.get('state')!;
    const stored = await server.pool.query('select state_hash from auth.oauth_states');
    expect(stored.rows.length).toBeGreaterThan(0);
    for (const row of stored.rows) expect((row.state_hash as Buffer).toString()).not.toContain(state);
  });

  test("the provider's PKCE: a code presented with another verifier is refused by the provider", async () => {
    const person = newPerson();
    const callback = await callbackUrlFor(await startSignIn(client()));
    await server.pool.query(`update auth.oauth_states set code_verifier = $1`, ['x'.repeat(43)]);
    expectRefusal(await toApp(callback), 'bad_oauth_callback');
    expect(await userCount(person.email)).toBe(0);
  });

  test('a refusal at the provider comes back as error and error_description', async () => {
    newPerson();
    const callback = new URL(await callbackUrlFor(await startSignIn(client())));
    callback.searchParams.delete('code');
    callback.searchParams.set('error', 'access_denied');
    callback.searchParams.set('error_description', 'The person said no');
    const landing = await toApp(callback.toString());
    expect(landing.origin + landing.pathname).toBe(CALLBACK);
    expect(landing.searchParams.get('error')).toBe('access_denied');
    expect(landing.searchParams.get('error_description')).toBe('The person said no');
  });
});

describe('ID tokens that must be refused', () => {
  const cases: [string, StandInProvider['tamper']][] = [
    ['another audience', { aud: 'someone-else' }],
    ['another issuer', { iss: 'https://issuer.example.net' }],
    ['another nonce', { nonce: 'not-the-nonce-we-sent' }],
    ['no nonce at all', { nonce: '' }],
    ['a signature by a key the provider does not publish', { foreignKey: true }],
  ];
  test.each(cases)('%s', async (_name, tamper) => {
    const person = newPerson();
    provider.tamper = tamper;
    const landing = await toApp(await startSignIn(client()));
    expectRefusal(landing, 'bad_oauth_callback');
    expect(landing.origin + landing.pathname).toBe(CALLBACK);
    expect(await userCount(person.email)).toBe(0);
  });
});

describe('accounts by e-mail', () => {
  test('a verified e-mail joins the existing account with that confirmed address', async () => {
    const person = newPerson();
    const signUp = await client().auth.signUp({ email: person.email, password: PASSWORD });
    const existingId = signUp.data.user!.id;
    const c = client();
    const { data } = await c.auth.exchangeCodeForSession(
      (await toApp(await startSignIn(c))).searchParams.get('code')!,
    );
    expect(data.user!.id).toBe(existingId);
    expect(data.user!.identities!.map((i) => i.provider).sort()).toEqual(['email', 'google']);
    expect(data.user!.app_metadata.providers).toEqual(expect.arrayContaining(['email', 'google']));
    // The password still works.
    const password = await client().auth.signInWithPassword({ email: person.email, password: PASSWORD });
    expect(password.data.user!.id).toBe(existingId);
  });

  test('an e-mail the provider did not verify never joins an existing account', async () => {
    const person = newPerson({ email_verified: false });
    const signUp = await client().auth.signUp({ email: person.email, password: PASSWORD });
    const landing = await toApp(await startSignIn(client()));
    expectRefusal(landing, 'provider_email_needs_verification');
    expect(landing.searchParams.get('error')).toBe('access_denied');
    const identities = await server.pool.query('select provider from auth.identities where user_id = $1', [
      signUp.data.user!.id,
    ]);
    expect(identities.rows.map((r) => r.provider)).toEqual(['email']);
    expect(await userCount(person.email)).toBe(1);
  });

  test('an account whose address nobody confirmed loses what its unproven owner set before it is joined', async () => {
    const person = newPerson();
    const admin = server.adminClient();
    const created = await admin.auth.admin.createUser({
      email: person.email,
      password: PASSWORD,
      email_confirm: false,
      user_metadata: { planted: 'by someone else' },
    });
    expect(created.error).toBeNull();
    const c = client();
    const { data } = await c.auth.exchangeCodeForSession(
      (await toApp(await startSignIn(c))).searchParams.get('code')!,
    );
    expect(data.user!.id).toBe(created.data.user!.id);
    expect(data.user!.identities!.map((i) => i.provider)).toEqual(['google']);
    expect(data.user!.user_metadata.planted).toBeUndefined();
    const password = await client().auth.signInWithPassword({ email: person.email, password: PASSWORD });
    expect(password.error?.code).toBe('invalid_credentials');
  });
});

test('a redirect_to that is not allowed lands on the site URL instead', async () => {
  newPerson();
  const c = client();
  const landing = await toApp(await startSignIn(c, 'google', 'https://evil.example.net/steal'));
  expect(landing.origin).toBe(SITE);
  expect(landing.pathname).toBe('/');
  const { error } = await c.auth.exchangeCodeForSession(landing.searchParams.get('code')!);
  expect(error).toBeNull();
});

describe('linking and unlinking', () => {
  async function passwordUser() {
    const email = `link${++counter}-${Date.now()}@example.com`;
    const c = client();
    await c.auth.signUp({ email, password: PASSWORD });
    const { error } = await c.auth.signInWithPassword({ email, password: PASSWORD });
    expect(error).toBeNull();
    return { c, email };
  }

  test('linkIdentity adds the provider identity to the signed-in user; unlinkIdentity removes it', async () => {
    const { c, email } = await passwordUser();
    const person = newPerson(); // the provider's address differs from the account's
    const me = (await c.auth.getUser()).data.user!;
    const { data, error } = await c.auth.linkIdentity({
      provider: 'github',
      options: { redirectTo: CALLBACK, skipBrowserRedirect: true },
    });
    expect(error).toBeNull();
    const landing = await toApp(data.url!);
    const exchanged = await c.auth.exchangeCodeForSession(landing.searchParams.get('code')!);
    expect(exchanged.error).toBeNull();
    expect(exchanged.data.user!.id).toBe(me.id);
    expect(exchanged.data.user!.email).toBe(email);

    const { data: listed } = await c.auth.getUserIdentities();
    const github = listed!.identities.find((i) => i.provider === 'github')!;
    expect(github).toMatchObject({ id: person.sub, email: person.email });
    expect(exchanged.data.user!.app_metadata.providers).toEqual(expect.arrayContaining(['email', 'github']));

    const raw = await call(server, 'GET', '/auth/v1/user/identities', {
      headers: { authorization: `Bearer ${exchanged.data.session!.access_token}` },
    });
    expect(raw.status).toBe(200);
    expect((raw.body.identities as unknown[]).length).toBe(2);

    const unlinked = await c.auth.unlinkIdentity(github);
    expect(unlinked.error).toBeNull();
    const after = await c.auth.getUserIdentities();
    expect(after.data!.identities.map((i) => i.provider)).toEqual(['email']);
    const refreshed = (await c.auth.refreshSession()).data.user!;
    expect(refreshed.app_metadata.providers).toEqual(['email']);

    // The last identity stays.
    const last = await c.auth.unlinkIdentity(after.data!.identities[0]!);
    expect(last.error?.code).toBe('single_identity_not_deletable');
    expect((await c.auth.getUserIdentities()).data!.identities).toHaveLength(1);
  });

  async function identityHolder(providerName: string, subject: string): Promise<string | null> {
    const { rows } = await server.pool.query<{ user_id: string }>(
      'select user_id from auth.identities where provider = $1 and provider_id = $2',
      [providerName, subject],
    );
    return rows[0]?.user_id ?? null;
  }

  test("a PKCE link opened in someone else's browser links nothing: only the initiator's verifier completes it", async () => {
    const { c } = await passwordUser();
    const initiator = (await c.auth.getUser()).data.user!;
    const { data } = await c.auth.linkIdentity({
      provider: 'github',
      options: { redirectTo: CALLBACK, skipBrowserRedirect: true },
    });
    // Someone else opens the URL and approves at the provider as themselves.
    const victim = newPerson();
    const landing = await toApp(data.url!);
    const code = landing.searchParams.get('code')!;
    expect(code).toBeTruthy();
    expect(await identityHolder('github', victim.sub)).toBeNull();
    // Their browser holds no verifier for this flow: the exchange is refused, still nothing linked.
    const elsewhere = await call(server, 'POST', '/auth/v1/token?grant_type=pkce', {
      body: { auth_code: code, code_verifier: randomBytes(32).toString('base64url') },
    });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.error_code).toBe('bad_code_verifier');
    expect(await identityHolder('github', victim.sub)).toBeNull();
    // The victim's own sign-in with the provider still makes their own account.
    const own = client();
    const signedIn = await own.auth.exchangeCodeForSession(
      (await toApp(await startSignIn(own, 'github'))).searchParams.get('code')!,
    );
    expect(signedIn.error).toBeNull();
    expect(signedIn.data.user!.id).not.toBe(initiator.id);
    expect(await identityHolder('github', victim.sub)).toBe(signedIn.data.user!.id);
  });

  test('a link without PKCE completes only in the browser that holds the cookie set on the authorize answer', async () => {
    let cookie: string | null = null;
    const implicit = createClient(server.url, server.config.projectApiKey, {
      auth: {
        flowType: 'implicit',
        persistSession: false,
        autoRefreshToken: false,
        detectSessionInUrl: false,
      },
      realtime: { transport: ws as unknown as typeof WebSocket },
      // The browser's cookie jar, for the one cookie this flow sets.
      global: {
        fetch: async (input, init) => {
          const response = await fetch(input, init);
          const set = response.headers.get('set-cookie');
          if (set?.startsWith('sb-identity-link=')) cookie = set;
          return response;
        },
      },
    });
    const email = `link${++counter}-${Date.now()}@example.com`;
    await implicit.auth.signUp({ email, password: PASSWORD });
    expect((await implicit.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    const me = (await implicit.auth.getUser()).data.user!;
    const link = async () => {
      const { data, error } = await implicit.auth.linkIdentity({
        provider: 'github',
        options: { redirectTo: CALLBACK, skipBrowserRedirect: true },
      });
      expect(error).toBeNull();
      return data.url!;
    };

    // Opened in another browser (no cookie): refused at the callback, nothing linked.
    const first = await link();
    expect(cookie).toMatch(
      /^sb-identity-link=[\w-]{43}; Max-Age=600; Path=\/auth\/v1\/callback; HttpOnly; Secure; SameSite=Lax/,
    );
    const victim = newPerson();
    const refused = await toApp(first);
    expectRefusal(refused, 'bad_oauth_state');
    expect(await identityHolder('github', victim.sub)).toBeNull();

    // In the initiator's browser, which sends the cookie back: linked, signed in.
    const second = await link();
    const secret = cookie!.split(';')[0]!;
    let next = publicToReal(second);
    let landing: URL | null = null;
    for (let hop = 0; hop < 10 && !landing; hop += 1) {
      const toCallback = new URL(next).pathname === '/auth/v1/callback';
      const response = await fetch(next, {
        redirect: 'manual',
        headers: toCallback ? { cookie: secret } : {},
      });
      const location = new URL(response.headers.get('location')!, next).toString();
      if (location.startsWith(SITE)) landing = new URL(location);
      else next = publicToReal(location);
    }
    expect(new URLSearchParams(landing!.hash.slice(1)).get('access_token')).toBeTruthy();
    expect(await identityHolder('github', victim.sub)).toBe(me.id);
  });

  test('an identity already linked to someone is not linked again, nor to another user', async () => {
    newPerson();
    const owner = client();
    await owner.auth.exchangeCodeForSession(
      (await toApp(await startSignIn(owner, 'github'))).searchParams.get('code')!,
    );
    const { c } = await passwordUser();
    const { data } = await c.auth.linkIdentity({
      provider: 'github',
      options: { redirectTo: CALLBACK, skipBrowserRedirect: true },
    });
    const landing = await toApp(data.url!);
    expectRefusal(landing, 'identity_already_exists');
    expect(landing.searchParams.get('error_description')).toBe('Identity is already linked to another user');
  });

  test("someone else's identity cannot be unlinked, and an unknown one says so", async () => {
    const { c } = await passwordUser();
    newPerson();
    const { data } = await c.auth.linkIdentity({
      provider: 'github',
      options: { redirectTo: CALLBACK, skipBrowserRedirect: true },
    });
    await c.auth.exchangeCodeForSession((await toApp(data.url!)).searchParams.get('code')!);
    expect((await c.auth.getUserIdentities()).data!.identities).toHaveLength(2);
    const { c: other } = await passwordUser();
    const theirs = (await other.auth.getUserIdentities()).data!.identities[0]!;
    const token = (await c.auth.getSession()).data.session!.access_token;
    const response = await call(server, 'DELETE', `/auth/v1/user/identities/${theirs.identity_id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(422);
    expect(response.body.error_code).toBe('identity_not_found');
    const notUuid = await call(server, 'DELETE', '/auth/v1/user/identities/nope', {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(notUuid.status).toBe(404);
    expect(notUuid.body.error_code).toBe('validation_failed');
    expect((await other.auth.getUserIdentities()).data!.identities).toHaveLength(1);
  });

  test('linking needs a signed-in user', async () => {
    const response = await call(server, 'GET', '/auth/v1/user/identities/authorize?provider=github');
    expect(response.status).toBe(401);
  });
});

describe('/authorize refusals', () => {
  test('an unknown provider, a known one not enabled, and a bad PKCE challenge are refused', async () => {
    const unknown = await call(server, 'GET', '/auth/v1/authorize?provider=myspace', { apikey: null });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error_code).toBe('validation_failed');
    expect(unknown.body.msg).toBe('Unsupported provider: Provider myspace could not be found');
    const disabled = await call(server, 'GET', '/auth/v1/authorize?provider=azure', { apikey: null });
    expect(disabled.status).toBe(400);
    expect(disabled.body.msg).toBe('Unsupported provider: provider is not enabled');
    const badPkce = await call(
      server,
      'GET',
      '/auth/v1/authorize?provider=google&code_challenge=short&code_challenge_method=s256',
      {
        apikey: null,
      },
    );
    expect(badPkce.status).toBe(400);
    expect(badPkce.body.error_code).toBe('validation_failed');
  });

  test('a provider that cannot be reached is 502 provider_unreachable, and nothing is stored', async () => {
    const before = await server.pool.query('select count(*)::int as n from auth.oauth_states');
    const response = await fetch(`${server.url}/auth/v1/authorize?provider=gitlab`, { redirect: 'manual' });
    expect(response.status).toBe(502);
    const body = (await response.json()) as { error_code: string; msg: string };
    expect(body.error_code).toBe('provider_unreachable');
    expect(body.msg).toBe('The GitLab sign-in service could not be reached');
    const after = await server.pool.query('select count(*)::int as n from auth.oauth_states');
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  test('parameters only the service decides are not passed on from the caller', async () => {
    newPerson();
    const c = client();
    const { data } = await c.auth.signInWithOAuth({
      provider: 'google',
      options: {
        redirectTo: CALLBACK,
        skipBrowserRedirect: true,
        queryParams: { prompt: 'consent', redirect_uri: 'https://evil.example.net/cb', state: 'mine' },
      },
    });
    const toProvider = await fetch(data.url!, { redirect: 'manual' });
    const sent = new URL(toProvider.headers.get('location')!).searchParams;
    expect(sent.get('prompt')).toBe('consent');
    expect(sent.get('redirect_uri')).toBe(`${server.config.authUrl}/auth/v1/callback`);
    expect(sent.get('state')).not.toBe('mine');
  });

  test('/settings says which providers are enabled', async () => {
    const settings = await call(server, 'GET', '/auth/v1/settings');
    expect(settings.body.external).toMatchObject({
      email: true,
      google: true,
      github: true,
      oidc: true,
      gitlab: true,
      azure: false,
    });
  });
});

describe('manual linking is off unless enabled, as in GoTrue', () => {
  let plain: TestServer;
  beforeAll(async () => {
    plain = await startTestServer({ SITE_URL: SITE, RATE_LIMIT_SIGNIN_PER_ADDRESS: '3', ...provider.env() });
  });
  afterAll(async () => plain?.close());

  test('linkIdentity and unlinkIdentity say "Manual linking is disabled"; the provider stays enabled', async () => {
    const c = createClient(plain.url, plain.config.projectApiKey, {
      auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
      realtime: { transport: ws as unknown as typeof WebSocket },
    });
    const email = `plain${++counter}-${Date.now()}@example.com`;
    expect((await c.auth.signUp({ email, password: PASSWORD })).error).toBeNull();
    const linked = await c.auth.linkIdentity({ provider: 'google', options: { skipBrowserRedirect: true } });
    expect(linked.error?.message).toContain('Manual linking is disabled');
    expect(linked.error?.status).toBe(404);
    expect(linked.error?.code).toBe('manual_linking_disabled');
    const identities = (await c.auth.getUserIdentities()).data!.identities;
    const unlinked = await c.auth.unlinkIdentity(identities[0]!);
    expect(unlinked.error?.message).toContain('Manual linking is disabled');
    expect((await c.auth.getUserIdentities()).data!.identities).toHaveLength(1);
    const settings = await call(plain, 'GET', '/auth/v1/settings');
    expect((settings.body.external as Record<string, boolean>).google).toBe(true);
  });

  test('starting sign-ins counts against the per-address sign-in limit (each start stores a state)', async () => {
    const start = () => fetch(`${plain.url}/auth/v1/authorize?provider=google`, { redirect: 'manual' });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await start()).status);
    expect(statuses).toEqual([302, 302, 302, 429]);
    const refused = await start();
    expect(((await refused.json()) as { error_code: string }).error_code).toBe('over_request_rate_limit');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const stored = await plain.pool.query('select count(*)::int as n from auth.oauth_states');
    expect(stored.rows[0].n).toBe(3);
  });
});

describe('who may get a new account', () => {
  async function landingOn(target: TestServer): Promise<URL> {
    const c = createClient(target.url, target.config.projectApiKey, {
      auth: { flowType: 'pkce', persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
      realtime: { transport: ws as unknown as typeof WebSocket },
    });
    const { data } = await c.auth.signInWithOAuth({
      provider: 'google',
      options: { redirectTo: CALLBACK, skipBrowserRedirect: true },
    });
    // These servers' public address is their own (no AUTH_URL): the callback is reached directly.
    const origin = target.config.authUrl;
    return followToApp(data.url!, SITE, { publicOrigin: origin, realOrigin: target.url });
  }
  const countOn = async (target: TestServer, email: string) =>
    (await target.pool.query('select count(*)::int as n from auth.users where email = $1', [email])).rows[0]
      .n as number;

  test('with DISABLE_SIGNUP a provider signs in existing accounts only', async () => {
    const closed = await startTestServer({ SITE_URL: SITE, DISABLE_SIGNUP: 'true', ...provider.env() });
    try {
      const stranger = newPerson();
      const refused = await landingOn(closed);
      expectRefusal(refused, 'signup_disabled');
      expect(refused.searchParams.get('error')).toBe('access_denied');
      expect(await countOn(closed, stranger.email)).toBe(0);

      const member = newPerson();
      const created = await closed
        .adminClient()
        .auth.admin.createUser({ email: member.email, email_confirm: true });
      expect(created.error).toBeNull();
      const joined = await landingOn(closed);
      expect(joined.searchParams.get('code')).toBeTruthy();
    } finally {
      await closed.close();
    }
  });

  test('with AUTH_AUTOCONFIRM=false an address the provider did not verify creates no account', async () => {
    const confirming = await startTestServer({
      SITE_URL: SITE,
      AUTH_AUTOCONFIRM: 'false',
      ...provider.env(),
    });
    try {
      const unverified = newPerson({ email_verified: false });
      expectRefusal(await landingOn(confirming), 'provider_email_needs_verification');
      expect(await countOn(confirming, unverified.email)).toBe(0);
      const verified = newPerson();
      expect((await landingOn(confirming)).searchParams.get('code')).toBeTruthy();
      expect(await countOn(confirming, verified.email)).toBe(1);
    } finally {
      await confirming.close();
    }
  });
});
