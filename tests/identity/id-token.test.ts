// Native and one-tap sign-in (POST /token?grant_type=id_token) through the real supabase-js client,
// against a stand-in OIDC issuer on real HTTP in this test (discovery document and JWKS, tokens
// signed with a jose key pair). It is configured as the operator's OIDC issuer, as an allowed
// issuer, and as Google (Google's issuer name, its keys fetched from the stand-in). Every refusal
// is checked to change nothing: no user, identity or session is written.
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';

const GOOGLE = 'https://accounts.google.com';
const GOOGLE_WEB = 'web-client.apps.googleusercontent.com';
const GOOGLE_IOS = 'ios-client.apps.googleusercontent.com';
const OIDC_CLIENT = 'tenantry-native-app';

interface Issuer {
  url: string;
  sign(claims: Record<string, unknown>, options?: SignOptions): Promise<string>;
  close(): Promise<void>;
}
interface SignOptions {
  iss?: string;
  aud?: string | string[];
  /** seconds from now; negative for a token already expired */
  expiresIn?: number;
  /** a key the JWKS does not publish, under the published kid */
  forged?: boolean;
  /** a kid the JWKS does not publish */
  kid?: string;
}

async function startIssuer(): Promise<Issuer> {
  const keys = await generateKeyPair('RS256', { extractable: true });
  const other = await generateKeyPair('RS256');
  const kid = randomUUID();
  const jwk: JWK = { ...(await exportJWK(keys.publicKey)), kid, alg: 'RS256', use: 'sig' };
  const server: Server = createServer((request, response) => {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (request.url === '/.well-known/openid-configuration') {
      return send(200, { issuer: issuer.url, jwks_uri: `${issuer.url}/jwks` });
    }
    if (request.url === '/jwks') return send(200, { keys: [jwk] });
    return send(404, {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer: Issuer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async sign(claims, options = {}) {
      const key: CryptoKey = options.forged ? other.privateKey : keys.privateKey;
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: options.kid ?? kid })
        .setIssuer(options.iss ?? issuer.url)
        .setAudience(options.aud ?? OIDC_CLIENT)
        .setIssuedAt(now - 60)
        .setExpirationTime(now + (options.expiresIn ?? 300))
        .sign(key);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return issuer;
}

let server: TestServer;
let issuer: Issuer;
// Another issuer, named only in EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS.
let allowedIssuer: Issuer;

beforeAll(async () => {
  issuer = await startIssuer();
  allowedIssuer = await startIssuer();
  server = await startTestServer({
    SECURITY_MANUAL_LINKING_ENABLED: 'true',
    EXTERNAL_GOOGLE_ENABLED: 'true',
    EXTERNAL_GOOGLE_CLIENT_ID: `${GOOGLE_WEB},${GOOGLE_IOS}`,
    EXTERNAL_GOOGLE_SECRET: 'google-secret',
    EXTERNAL_GOOGLE_URL: issuer.url,
    EXTERNAL_GOOGLE_JWKS_URL: `${issuer.url}/jwks`,
    EXTERNAL_OIDC_ENABLED: 'true',
    EXTERNAL_OIDC_CLIENT_ID: OIDC_CLIENT,
    EXTERNAL_OIDC_SECRET: 'oidc-secret',
    EXTERNAL_OIDC_URL: issuer.url,
    EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS: allowedIssuer.url,
    // Apple under its own issuer name, its keys fetched from the stand-in; the iOS app's bundle id.
    EXTERNAL_APPLE_ENABLED: 'true',
    EXTERNAL_APPLE_CLIENT_ID: 'com.example.tenantry.web',
    EXTERNAL_IOS_BUNDLE_ID: 'com.example.tenantry',
    EXTERNAL_APPLE_JWKS_URL: `${issuer.url}/jwks`,
  });
});
afterAll(async () => {
  await server?.close();
  await issuer?.close();
  await allowedIssuer?.close();
});

let counter = 0;
function person(overrides: Record<string, unknown> = {}) {
  counter += 1;
  return {
    sub: `subject-${counter}-${randomUUID()}`,
    email: `native${counter}-${Date.now()}@example.com`,
    email_verified: true,
    name: `Native ${counter}`,
    ...overrides,
  };
}
const hashed = (nonce: string) => createHash('sha256').update(nonce).digest('hex');
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());

async function counts() {
  const { rows } = await server.pool.query<{ users: string; identities: string; sessions: string }>(
    `select (select count(*) from auth.users) users, (select count(*) from auth.identities) identities,
            (select count(*) from auth.sessions) sessions`,
  );
  return rows[0];
}

async function grant(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return call(server, 'POST', '/auth/v1/token?grant_type=id_token', { body, headers });
}

describe('signing in with an ID token', () => {
  test('supabase-js signInWithIdToken signs a Google user in; the second time finds the same user', async () => {
    const p = person();
    const nonce = randomUUID();
    const token = await issuer.sign({ ...p, nonce: hashed(nonce) }, { iss: GOOGLE, aud: GOOGLE_IOS });
    const { data, error } = await server
      .client()
      .auth.signInWithIdToken({ provider: 'google', token, nonce });
    expect(error).toBeNull();
    expect(data.user?.email).toBe(p.email);
    expect(data.user?.app_metadata.provider).toBe('google');
    expect(data.user?.identities?.map((i) => [i.provider, i.id])).toEqual([['google', p.sub]]);
    expect(data.user?.email_confirmed_at).toBeTruthy();
    expect(claimsOf(data.session!.access_token).amr).toEqual([expect.objectContaining({ method: 'oauth' })]);

    const again = await issuer.sign({ ...p, nonce: hashed('another') }, { iss: GOOGLE, aud: GOOGLE_WEB });
    const second = await server.client().auth.signInWithIdToken({
      provider: 'google',
      token: again,
      nonce: 'another',
    });
    expect(second.error).toBeNull();
    expect(second.data.user?.id).toBe(data.user!.id);
    const identities = await server.pool.query('select 1 from auth.identities where provider_id = $1', [
      p.sub,
    ]);
    expect(identities.rowCount).toBe(1);
  });

  test("the operator's OIDC issuer signs in by name, its client id as audience, no nonce on either side", async () => {
    const p = person();
    const { data, error } = await server
      .client()
      .auth.signInWithIdToken({ provider: 'oidc', token: await issuer.sign(p) });
    expect(error).toBeNull();
    expect(data.user?.identities?.[0]?.provider).toBe('oidc');
  });

  test('an explicitly allowed issuer signs in with issuer and client_id; any other issuer is refused', async () => {
    const p = person();
    const token = await allowedIssuer.sign(p, { aud: 'some-app' });
    const allowed = await grant({ id_token: token, issuer: allowedIssuer.url, client_id: 'some-app' });
    expect(allowed.status).toBe(200);
    const before = await counts();
    const refused = await grant({
      id_token: token,
      issuer: 'https://issuer.example.com',
      client_id: 'some-app',
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      error_code: 'validation_failed',
      msg: 'Custom OIDC provider "" not allowed',
    });
    expect(await counts()).toEqual(before);
  });

  test("Apple: the bundle id is an audience, Apple's e-mail counts as verified, either issuer name is read from the token", async () => {
    const p = person({ email_verified: undefined });
    const nonce = randomUUID();
    const token = await issuer.sign(
      { ...p, nonce: hashed(nonce), is_private_email: true },
      { iss: 'https://appleid.apple.com', aud: 'com.example.tenantry' },
    );
    const { data, error } = await server.client().auth.signInWithIdToken({ provider: 'apple', token, nonce });
    expect(error).toBeNull();
    expect(data.user?.email).toBe(p.email);
    expect(data.user?.email_confirmed_at).toBeTruthy();
    expect(data.user?.identities?.[0]?.provider).toBe('apple');
    expect(data.user?.identities?.[0]?.identity_data).toMatchObject({
      email_verified: true,
      iss: 'https://appleid.apple.com',
    });

    const before = await counts();
    const stated = await grant({
      provider: 'apple',
      issuer: 'https://account.apple.com',
      nonce,
      id_token: token,
    });
    expect(stated.status).toBe(400);
    expect(stated.body).toMatchObject({ msg: 'Provided issuer does not match ID token issuer' });
    const foreign = await grant({ provider: 'apple', id_token: await issuer.sign(person()) });
    expect(foreign.status).toBe(400);
    expect(foreign.body).toMatchObject({ msg: 'Detected ID token issuer is not an Apple ID token issuer' });
    expect(await counts()).toEqual(before);
  });

  test('at_hash is checked when the client sends the access token', async () => {
    const accessToken = randomUUID();
    const digest = createHash('sha256').update(accessToken).digest();
    const token = await issuer.sign({ ...person(), at_hash: digest.subarray(0, 16).toString('base64url') });
    expect((await grant({ provider: 'oidc', id_token: token, access_token: accessToken })).status).toBe(200);
    const before = await counts();
    const wrong = await grant({ provider: 'oidc', id_token: token, access_token: 'another-token' });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ msg: 'Bad ID token' });
    expect(await counts()).toEqual(before);
  });
});

describe('refusals change nothing', () => {
  const cases: [string, () => Promise<Record<string, unknown>>, number, string, string][] = [
    [
      'wrong audience',
      async () => ({
        provider: 'google',
        id_token: await issuer.sign(person(), { iss: GOOGLE, aud: 'someone-else' }),
      }),
      400,
      'validation_failed',
      'Unacceptable audience in id_token: [someone-else]',
    ],
    [
      'wrong issuer',
      async () => ({ provider: 'google', id_token: await issuer.sign(person(), { aud: GOOGLE_WEB }) }),
      400,
      'validation_failed',
      'Bad ID token',
    ],
    [
      'expired',
      async () => ({
        provider: 'google',
        id_token: await issuer.sign(person(), { iss: GOOGLE, aud: GOOGLE_WEB, expiresIn: -10 }),
      }),
      400,
      'validation_failed',
      'Bad ID token',
    ],
    [
      'wrong nonce',
      async () => ({
        provider: 'google',
        nonce: 'not-the-one',
        id_token: await issuer.sign(
          { ...person(), nonce: hashed('the-one') },
          { iss: GOOGLE, aud: GOOGLE_WEB },
        ),
      }),
      400,
      'validation_failed',
      'Nonces mismatch',
    ],
    [
      'the raw nonce in the token instead of its hash',
      async () => ({
        provider: 'google',
        nonce: 'the-one',
        id_token: await issuer.sign({ ...person(), nonce: 'the-one' }, { iss: GOOGLE, aud: GOOGLE_WEB }),
      }),
      400,
      'validation_failed',
      'Nonces mismatch',
    ],
    [
      'missing nonce when the token has one',
      async () => ({
        provider: 'google',
        id_token: await issuer.sign({ ...person(), nonce: hashed('x') }, { iss: GOOGLE, aud: GOOGLE_WEB }),
      }),
      400,
      'validation_failed',
      'Passed nonce and nonce in id_token should either both exist or not.',
    ],
    [
      'a nonce the token does not carry',
      async () => ({
        provider: 'google',
        nonce: 'x',
        id_token: await issuer.sign(person(), { iss: GOOGLE, aud: GOOGLE_WEB }),
      }),
      400,
      'validation_failed',
      'Passed nonce and nonce in id_token should either both exist or not.',
    ],
    [
      'forged signature',
      async () => ({
        provider: 'google',
        id_token: await issuer.sign(person(), { iss: GOOGLE, aud: GOOGLE_WEB, forged: true }),
      }),
      400,
      'validation_failed',
      'Bad ID token',
    ],
    [
      'unknown kid',
      async () => ({
        provider: 'google',
        id_token: await issuer.sign(person(), { iss: GOOGLE, aud: GOOGLE_WEB, kid: 'not-published' }),
      }),
      400,
      'validation_failed',
      'Bad ID token',
    ],
    [
      'not a JWT',
      async () => ({ provider: 'google', id_token: 'not.a.jwt' }),
      400,
      'validation_failed',
      'Bad ID token',
    ],
    [
      'disabled provider',
      async () => ({ provider: 'kakao', id_token: await issuer.sign(person()) }),
      400,
      'provider_disabled',
      'Provider (issuer "https://kauth.kakao.com") is not enabled',
    ],
    ['no id_token', async () => ({ provider: 'google' }), 400, 'validation_failed', 'id_token required'],
    [
      'neither provider nor issuer',
      async () => ({ id_token: await issuer.sign(person()) }),
      400,
      'validation_failed',
      'provider or client_id and issuer required',
    ],
  ];
  test.each(cases)('%s', async (_name, body, status, code, message) => {
    const before = await counts();
    const answer = await grant(await body());
    expect(answer.status).toBe(status);
    expect(answer.body).toMatchObject({ error_code: code, msg: message });
    expect(await counts()).toEqual(before);
  });

  test('supabase-js reports the refusal', async () => {
    const { data, error } = await server.client().auth.signInWithIdToken({
      provider: 'google',
      token: await issuer.sign(person(), { iss: GOOGLE, aud: 'someone-else' }),
    });
    expect(data.session).toBeNull();
    expect(error?.status).toBe(400);
    expect(error?.message).toBe('Unacceptable audience in id_token: [someone-else]');
  });
});

describe('a server with manual linking off and 2 attempts per address', () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({
      EXTERNAL_OIDC_ENABLED: 'true',
      EXTERNAL_OIDC_CLIENT_ID: OIDC_CLIENT,
      EXTERNAL_OIDC_SECRET: 'oidc-secret',
      EXTERNAL_OIDC_URL: issuer.url,
      RATE_LIMIT_SIGNIN_PER_ADDRESS: '2',
    });
  });
  afterAll(async () => {
    await limited?.close();
  });
  const attempt = async (body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    call(limited, 'POST', '/auth/v1/token?grant_type=id_token', {
      body: { provider: 'oidc', id_token: await issuer.sign(person()), ...body },
      headers,
    });

  test('link_identity is refused as every other link is: 404 manual_linking_disabled', async () => {
    const email = `linker-${randomUUID()}@example.com`;
    await limited
      .adminClient()
      .auth.admin.createUser({ email, password: 'correct horse battery', email_confirm: true });
    const owner = await limited
      .client()
      .auth.signInWithPassword({ email, password: 'correct horse battery' });
    const { rows } = await limited.pool.query('select count(*)::int n from auth.identities');
    const answer = await attempt(
      { link_identity: true },
      { authorization: `Bearer ${owner.data.session!.access_token}` },
    );
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ error_code: 'manual_linking_disabled' });
    expect((await limited.pool.query('select count(*)::int n from auth.identities')).rows).toEqual(rows);
  });

  test('an address past RATE_LIMIT_SIGNIN_PER_ADDRESS is refused with 429 before the token is looked at', async () => {
    expect((await attempt()).status).toBe(200);
    expect((await attempt()).status).toBe(200);
    const third = await attempt();
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({ error_code: 'over_request_rate_limit' });
  });
});

describe('existing accounts, as provider sign-in decides', () => {
  test('a verified address joins the account that confirmed it', async () => {
    const p = person();
    const created = await server.adminClient().auth.admin.createUser({
      email: p.email,
      password: 'correct horse battery',
      email_confirm: true,
    });
    const { data, error } = await server
      .client()
      .auth.signInWithIdToken({ provider: 'oidc', token: await issuer.sign(p) });
    expect(error).toBeNull();
    expect(data.user?.id).toBe(created.data.user!.id);
    expect(data.user?.identities?.map((i) => i.provider).sort()).toEqual(['email', 'oidc']);
  });

  test('an unverified address never joins an existing account', async () => {
    const p = person({ email_verified: false });
    await server
      .adminClient()
      .auth.admin.createUser({ email: p.email, password: 'correct horse battery', email_confirm: true });
    const before = await counts();
    const answer = await grant({ provider: 'oidc', id_token: await issuer.sign(p) });
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ error_code: 'provider_email_needs_verification' });
    expect(await counts()).toEqual(before);
  });

  test('link_identity adds the identity to the signed-in user; refused without a user token', async () => {
    const email = `owner-${randomUUID()}@example.com`;
    await server
      .adminClient()
      .auth.admin.createUser({ email, password: 'correct horse battery', email_confirm: true });
    const owner = await server.client().auth.signInWithPassword({ email, password: 'correct horse battery' });
    const bearer = owner.data.session!.access_token;
    const p = person();
    const token = await issuer.sign(p);
    const before = await counts();
    const unsigned = await grant({ provider: 'oidc', id_token: token, link_identity: true });
    expect(unsigned.status).toBe(400);
    expect(unsigned.body).toMatchObject({
      msg: 'Linking requires a valid user access token in Authorization',
    });
    expect(await counts()).toEqual(before);

    const linked = await grant(
      { provider: 'oidc', id_token: token, link_identity: true },
      { authorization: `Bearer ${bearer}` },
    );
    expect(linked.status).toBe(200);
    expect((linked.body as { user: { id: string } }).user.id).toBe(owner.data.user!.id);
    const again = await grant(
      { provider: 'oidc', id_token: token, link_identity: true },
      { authorization: `Bearer ${bearer}` },
    );
    expect(again.status).toBe(422);
    expect(again.body).toMatchObject({
      error_code: 'identity_already_exists',
      msg: 'Identity is already linked',
    });
  });
});
