// Asymmetric access tokens: ES256/RS256 keys from JWT_KEYS sign tokens, the public halves are
// published at /.well-known/jwks.json (checked with jose's remote key set and supabase-js's
// getClaims), HS256 with JWT_SECRET is accepted only while the rotation window is open, and
// forged tokens (unknown kid, algorithm confusion, none, expired, tampered) are refused by the
// identity service and the data API alike.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  SignJWT,
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  jwtVerify,
  type JWK,
} from 'jose';
import { createClient } from '@supabase/supabase-js';
import ws from 'ws';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/server/config.js';
import { call, randomKey, startTestServer, type TestServer } from '../support/server.js';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'];

async function keyPair(alg: 'ES256' | 'RS256', kid: string) {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid, alg };
  return { privateKey, publicKey, jwk, publicJwk: { ...(await exportJWK(publicKey)), kid, alg } };
}

let es: Awaited<ReturnType<typeof keyPair>>;
let rs: Awaited<ReturnType<typeof keyPair>>;
let server: TestServer;
let counter = 0;

beforeAll(async () => {
  es = await keyPair('ES256', 'es-current');
  rs = await keyPair('RS256', 'rs-next');
  server = await startTestServer({ JWT_KEYS: JSON.stringify([es.jwk, rs.jwk]) });
});
afterAll(async () => server?.close());

async function session(target = server) {
  const email = `keys${++counter}-${Date.now()}@example.com`;
  const res = await call(target, 'POST', '/auth/v1/signup', {
    body: { email, password: 'correct horse battery' },
  });
  expect(res.status).toBe(200);
  return res.body as unknown as { access_token: string; user: { id: string; email: string } };
}

const getUser = (token: string, target = server) =>
  call(target, 'GET', '/auth/v1/user', { headers: { authorization: `Bearer ${token}` } });
const restGet = (token: string, target = server) =>
  call(target, 'GET', '/rest/v1/workspaces?select=id', { headers: { authorization: `Bearer ${token}` } });

/** Expects both the identity service and the data API to refuse the token. */
async function expectRefused(token: string, reason: RegExp) {
  const auth = await getUser(token);
  expect(auth.status).toBe(401);
  expect(auth.body.error_code).toBe('bad_jwt');
  expect(auth.body.msg).toMatch(reason);
  const rest = await restGet(token);
  expect(rest.status).toBe(401);
  expect(rest.body.code).toMatch(/^PGRST30[13]$/);
}

/** P-256's group order: an ES256 signature (r, s) and (r, n - s) both verify. */
const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

/**
 * The token with its ES256 signature in low-S form, the one spelling the service accepts (jose
 * signs either form), so a test about expiry is not refused for its spelling instead.
 */
function lowS(token: string): string {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const bytes = Buffer.from(signature, 'base64url');
  const s = BigInt(`0x${bytes.subarray(32).toString('hex')}`);
  if (s <= P256_ORDER / 2n) return token;
  const low = Buffer.from((P256_ORDER - s).toString(16).padStart(64, '0'), 'hex');
  return `${header}.${payload}.${Buffer.concat([bytes.subarray(0, 32), low]).toString('base64url')}`;
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

describe('the published key set', () => {
  test('lists the public halves of ES256 and RS256 keys, without an apikey, and nothing private', async () => {
    const res = await call(server, 'GET', '/auth/v1/.well-known/jwks.json', { apikey: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=600');
    const keys = res.body.keys as JWK[];
    expect(keys.map((k) => k.kid)).toEqual(['es-current', 'rs-next']);
    expect(keys[0]).toEqual({
      kty: 'EC',
      crv: 'P-256',
      x: es.publicJwk.x,
      y: es.publicJwk.y,
      kid: 'es-current',
      alg: 'ES256',
      use: 'sig',
      key_ops: ['verify'],
    });
    expect(keys[1]).toMatchObject({ kty: 'RSA', n: rs.publicJwk.n, e: rs.publicJwk.e, alg: 'RS256' });
    for (const key of keys) for (const member of PRIVATE_MEMBERS) expect(key).not.toHaveProperty(member);
    expect(res.text).not.toContain(es.jwk.d);
    expect(res.text).not.toContain(server.config.jwtSecret);
  });

  test('an HS256 key in JWT_KEYS is a secret: never published, still verifies its own kid', async () => {
    const secret = randomKey() + randomKey();
    const oct = { kty: 'oct', k: Buffer.from(secret).toString('base64url'), kid: 'hs-old', alg: 'HS256' };
    const withOct = await startTestServer({
      JWT_KEYS: JSON.stringify([
        { ...rs.jwk, key_ops: ['sign', 'verify'] },
        { ...oct, key_ops: ['verify'] },
      ]),
    });
    try {
      const jwks = await call(withOct, 'GET', '/auth/v1/.well-known/jwks.json', { apikey: null });
      expect((jwks.body.keys as JWK[]).map((k) => k.kid)).toEqual(['rs-next']);
      expect(jwks.text).not.toContain(oct.k);
      // the key marked "sign" signs, as GoTrue's key_ops rule says
      const signed = await session(withOct);
      expect(decodeProtectedHeader(signed.access_token)).toEqual({
        alg: 'RS256',
        kid: 'rs-next',
        typ: 'JWT',
      });
      const viaOct = await new SignJWT(decodeJwt(signed.access_token))
        .setProtectedHeader({ alg: 'HS256', kid: 'hs-old' })
        .sign(new TextEncoder().encode(secret));
      expect((await getUser(viaOct, withOct)).status).toBe(200);
    } finally {
      await withOct.close();
    }
  });
});

describe('tokens signed with the current key', () => {
  test('carry alg and kid, and verify with jose against the published key set', async () => {
    const { access_token: token, user } = await session();
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', kid: 'es-current', typ: 'JWT' });
    const jwks = createRemoteJWKSet(new URL(`${server.url}/auth/v1/.well-known/jwks.json`));
    const { payload } = await jwtVerify(token, jwks, {
      issuer: `${server.config.authUrl}/auth/v1`,
      audience: 'authenticated',
      algorithms: ['ES256', 'RS256'],
    });
    expect(payload).toMatchObject({ sub: user.id, role: 'authenticated', email: user.email });
  });

  test('OpenID discovery names the issuer and a key set that verifies its tokens, without an apikey', async () => {
    const discovery = await call(server, 'GET', '/auth/v1/.well-known/openid-configuration', {
      apikey: null,
    });
    expect(discovery.status).toBe(200);
    expect(discovery.headers.get('cache-control')).toBe('public, max-age=600');
    const { issuer, jwks_uri: jwksUri } = discovery.body as { issuer: string; jwks_uri: string };
    expect(issuer).toBe(`${server.config.authUrl}/auth/v1`);
    expect(jwksUri).toBe(`${issuer}/.well-known/jwks.json`);
    // A relying party that knows only the issuer: discovery, then the key set, then the token. The
    // test server listens elsewhere than its configured public URL, so the key set is fetched at
    // the same path on the address it listens on.
    const keySetUrl = new URL(new URL(jwksUri).pathname, server.url);
    const { access_token: token, user } = await session();
    const { payload } = await jwtVerify(token, createRemoteJWKSet(keySetUrl), {
      issuer,
      audience: 'authenticated',
    });
    expect(payload.sub).toBe(user.id);
  });

  test('supabase-js getClaims verifies the token with the JWKS it fetches', async () => {
    const fetched: string[] = [];
    const client = createClient(server.url, server.config.projectApiKey, {
      auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
      realtime: { transport: ws as unknown as typeof WebSocket },
      global: {
        fetch: (input, init) => {
          fetched.push(String(input instanceof Request ? input.url : input));
          return fetch(input, init);
        },
      },
    });
    const email = `claims${++counter}@example.com`;
    const { data: signedUp, error: signUpError } = await client.auth.signUp({
      email,
      password: 'correct horse battery',
    });
    expect(signUpError).toBeNull();
    const { data, error } = await client.auth.getClaims();
    expect(error).toBeNull();
    expect(data?.claims).toMatchObject({ email, sub: signedUp.user!.id, role: 'authenticated' });
    expect(data?.header).toMatchObject({ alg: 'ES256', kid: 'es-current' });
    expect(fetched).toContain(`${server.url}/auth/v1/.well-known/jwks.json`);
    // verified locally: no /user round trip
    expect(fetched.filter((u) => u.endsWith('/auth/v1/user'))).toEqual([]);
  });

  test('are accepted by the identity service and the data API', async () => {
    const { access_token: token } = await session();
    expect((await getUser(token)).status).toBe(200);
    const rest = await restGet(token);
    expect(rest.status).toBe(200);
    expect(rest.body).toEqual([]);
  });

  test('a token signed by another key of the set (the next key) is accepted by its kid', async () => {
    const { access_token: token } = await session();
    const byNext = await new SignJWT(decodeJwt(token))
      .setProtectedHeader({ alg: 'RS256', kid: 'rs-next', typ: 'JWT' })
      .sign(rs.privateKey);
    expect((await getUser(byNext)).status).toBe(200);
    expect((await restGet(byNext)).status).toBe(200);
  });
});

describe('the rotation window for HS256 (JWT_SECRET)', () => {
  async function legacyToken(target: TestServer, claims: Record<string, unknown>) {
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(new TextEncoder().encode(target.config.jwtSecret));
  }

  test('open by default: HS256 tokens signed with JWT_SECRET are still accepted', async () => {
    const { access_token: token } = await session();
    const legacy = await legacyToken(server, decodeJwt(token));
    expect((await getUser(legacy)).status).toBe(200);
    expect((await restGet(legacy)).status).toBe(200);
  });

  test('closed with JWT_SECRET_ACCEPTED=false: the same tokens are refused everywhere', async () => {
    const closed = await startTestServer({
      JWT_KEYS: JSON.stringify([es.jwk]),
      JWT_SECRET_ACCEPTED: 'false',
    });
    try {
      const { access_token: token } = await session(closed);
      expect((await getUser(token, closed)).status).toBe(200);
      const legacy = await legacyToken(closed, decodeJwt(token));
      const auth = await getUser(legacy, closed);
      expect(auth.status).toBe(401);
      expect(auth.body.msg).toContain('signing method');
      expect((await restGet(legacy, closed)).status).toBe(401);
    } finally {
      await closed.close();
    }
  });

  test('without JWT_KEYS, JWT_SECRET signs and cannot be refused', async () => {
    const plain = await startTestServer();
    try {
      const { access_token: token } = await session(plain);
      expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'JWT' });
      const jwks = await call(plain, 'GET', '/auth/v1/.well-known/jwks.json', { apikey: null });
      expect(jwks.body).toEqual({ keys: [] });
    } finally {
      await plain.close();
    }
    await expect(
      loadConfig({
        DATABASE_URL: 'postgres://x@localhost/db',
        ...productionSecrets(),
        JWT_SECRET_ACCEPTED: 'false',
      }),
    ).rejects.toThrow(/JWT_SECRET_ACCEPTED/);
  });
});

describe('forged tokens are refused by the identity service and the data API', () => {
  let claims: Record<string, unknown>;
  beforeAll(async () => {
    claims = decodeJwt((await session()).access_token);
  });

  test('an unknown kid, even when the signature is good for its own key', async () => {
    const stranger = await keyPair('ES256', 'stranger');
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'stranger' })
      .sign(stranger.privateKey);
    await expectRefused(token, /unrecognized JWT kid/);
  });

  test('a known kid over another key’s signature', async () => {
    const stranger = await keyPair('ES256', 'es-current');
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'es-current' })
      .sign(stranger.privateKey);
    await expectRefused(token, /signature is invalid/);
  });

  test('alg confusion: HS256 with the public key as the HMAC secret, with and without its kid', async () => {
    const secrets = [
      new TextEncoder().encode(await exportSPKI(es.publicKey)),
      new TextEncoder().encode(JSON.stringify(es.publicJwk)),
      new TextEncoder().encode(await exportSPKI(rs.publicKey)),
    ];
    for (const secret of secrets) {
      for (const header of [
        { alg: 'HS256', kid: 'es-current' },
        { alg: 'HS256', kid: 'rs-next' },
        { alg: 'HS256' },
      ]) {
        const token = await new SignJWT(claims).setProtectedHeader(header).sign(secret);
        await expectRefused(token, /signing method|signature is invalid/);
      }
    }
  });

  test('an algorithm that is not the key’s own: RS256 naming the ES256 key, ES256 naming the RS256 key', async () => {
    const rsUnderEsKid = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: 'es-current' })
      .sign(rs.privateKey);
    await expectRefused(rsUnderEsKid, /signing method/);
    const esUnderRsKid = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'rs-next' })
      .sign(es.privateKey);
    await expectRefused(esUnderRsKid, /signing method/);
    const other = await generateKeyPair('ES384');
    const es384 = await new SignJWT(claims).setProtectedHeader({ alg: 'ES384' }).sign(other.privateKey);
    await expectRefused(es384, /signing method/);
  });

  test('alg none, with and without a kid', async () => {
    for (const header of [
      { alg: 'none', typ: 'JWT' },
      { alg: 'none', kid: 'es-current' },
    ]) {
      await expectRefused(`${base64url(header)}.${base64url(claims)}.`, /signing method|malformed/);
    }
  });

  test('an expired token signed with the current key', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = lowS(
      await new SignJWT({ ...claims, iat: now - 7200, exp: now - 60 })
        .setProtectedHeader({ alg: 'ES256', kid: 'es-current' })
        .sign(es.privateKey),
    );
    await expectRefused(token, /expired/);
    expect((await restGet(token)).body.code).toBe('PGRST303');
  });

  test('a tampered payload under a genuine signature', async () => {
    const [header, , signature] = (await session()).access_token.split('.');
    const tampered = `${header}.${base64url({ ...claims, sub: crypto.randomUUID() })}.${signature}`;
    await expectRefused(tampered, /signature is invalid/);
    // GoTrue's wording, which clients (supabase-js's getClaims through GET /user) look for
    expect((await getUser(tampered)).body.msg).toBe(
      'invalid JWT: unable to parse or verify signature, token signature is invalid: signature is invalid',
    );
  });

  test('a kid that is not a string, and garbage', async () => {
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 7 as unknown as string })
      .sign(es.privateKey);
    await expectRefused(token, /unrecognized JWT kid/);
    await expectRefused('a.b.c', /malformed/);
  });
});

function productionSecrets() {
  return {
    JWT_SECRET: randomKey(),
    PROJECT_API_KEY: randomKey('anon_'),
    SERVICE_ROLE_KEY: randomKey('service_'),
    PAYMENT_WEBHOOK_SECRET: randomKey('whsec_'),
    CRON_SECRET: randomKey(),
  };
}

describe('JWT_KEYS is checked at start-up', () => {
  const load = (keys: unknown) =>
    loadConfig({
      DATABASE_URL: 'postgres://x@localhost/db',
      ...productionSecrets(),
      JWT_KEYS: typeof keys === 'string' ? keys : JSON.stringify(keys),
    });

  test('accepts a JWK set object as well as an array', async () => {
    const config = await load({ keys: [es.jwk] });
    expect(config.jwtKeys?.signing.kid).toBe('es-current');
  });

  // Built lazily: the key pairs exist only once beforeAll has run.
  const cases: [string, () => unknown, RegExp][] = [
    ['not JSON', () => 'nope', /JSON array/],
    ['an empty list', () => [], /at least one/],
    ['a key without kid', () => [{ ...es.jwk, kid: undefined }], /kid/],
    ['an unsupported algorithm', () => [{ ...rs.jwk, alg: 'RS512' }], /ES256, RS256 or HS256/],
    ['EdDSA', () => [{ kty: 'OKP', crv: 'Ed25519', x: 'AAAA', kid: 'ed' }], /ES256, RS256 or HS256/],
    ['alg not matching kty', () => [{ ...es.jwk, alg: 'RS256' }], /needs kty RSA/],
    ['a repeated kid', () => [es.jwk, { ...rs.jwk, kid: 'es-current' }], /twice/],
    [
      'two signing keys',
      () => [
        { ...es.jwk, key_ops: ['sign'] },
        { ...rs.jwk, key_ops: ['sign'] },
      ],
      /only one/,
    ],
    ['a signing key without private members', () => [es.publicJwk], /private members/],
    ['some private members only', () => [{ ...rs.jwk, qi: undefined }], /must all be given/],
    ['a short HS256 key', () => [{ kty: 'oct', k: 'c2hvcnQ', kid: 'h', alg: 'HS256' }], /at least 32 bytes/],
  ];
  test.each(cases)('refuses %s, naming JWT_KEYS', async (_name, keys, message) => {
    const error = await load(keys()).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/JWT_KEYS/);
    expect((error as Error).message).toMatch(message);
  });

  test('refuses a private half from another key pair, without echoing key material', async () => {
    const other = await keyPair('RS256', 'other');
    const { d, p, q, dp, dq, qi } = other.jwk;
    const error = await load([{ ...rs.jwk, d, p, q, dp, dq, qi }]).catch((e: Error) => e);
    expect((error as Error).message).toMatch(/kid rs-next: .*(do not belong|not a usable)/);
    expect((error as Error).message).not.toContain(d);
    const ecError = await load([{ ...es.jwk, d: (await keyPair('ES256', 'x')).jwk.d }]).catch(
      (e: Error) => e,
    );
    expect((ecError as Error).message).toMatch(/kid es-current: .*(do not belong|not a usable)/);
  });

  test('refuses an RSA key shorter than 2048 bits', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const error = await load([{ ...privateKey.export({ format: 'jwk' }), kid: 'short', alg: 'RS256' }]).catch(
      (e: Error) => e,
    );
    expect((error as Error).message).toMatch(/2048 bits/);
  });
});

describe('local mode', () => {
  test('generates an ES256 development key once, keeps it in dev-secrets.json, and signs with it', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'tenantry-keys-'));
    const first = await loadConfig({ DATA_DIR: dataDir });
    const second = await loadConfig({ DATA_DIR: dataDir });
    expect(first.jwtKeys?.signing.alg).toBe('ES256');
    expect(second.jwtKeys?.signing.kid).toBe(first.jwtKeys?.signing.kid);
    expect(first.jwtSecretAccepted).toBe(true);
    const stored = JSON.parse(readFileSync(path.join(dataDir, 'dev-secrets.json'), 'utf8')) as {
      JWT_KEYS: string;
    };
    const [key] = JSON.parse(stored.JWT_KEYS) as JWK[];
    expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', kid: first.jwtKeys?.signing.kid });
    expect(typeof key!.d).toBe('string');
  });
});
