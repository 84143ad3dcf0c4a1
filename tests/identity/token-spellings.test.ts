// One access token has one spelling: every other spelling of a valid token (a last base64url
// character whose spare bits are set, an ECDSA signature with s replaced by n − s, or both) is
// refused with 401 by the identity service and the data API alike, while the canonical token
// works; every ES256 token the service issues is already in that canonical (low-S) form. Covers
// ES256 (JWT_KEYS), RS256 (JWT_KEYS) and HS256 (JWT_SECRET).
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';

const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Every spelling of a base64url segment that decodes to the same bytes (the canonical one first). */
function spellings(segment: string): string[] {
  const spareBits = (segment.length * 6) % 8;
  const last = ALPHABET.indexOf(segment.at(-1)!);
  const head = segment.slice(0, -1);
  const variants: string[] = [];
  for (let spare = 0; spare < 1 << spareBits; spare++) {
    variants.push(head + ALPHABET[(last & ~((1 << spareBits) - 1)) | spare]);
  }
  return [segment, ...variants.filter((v) => v !== segment)];
}

/** The other ECDSA signature over the same input: (r, n − s). */
function otherS(signature: string): string {
  const bytes = Buffer.from(signature, 'base64url');
  const s = BigInt(`0x${bytes.subarray(32).toString('hex')}`);
  const flipped = Buffer.from((P256_ORDER - s).toString(16).padStart(64, '0'), 'hex');
  return Buffer.concat([bytes.subarray(0, 32), flipped]).toString('base64url');
}

function isLowS(signature: string): boolean {
  const s = BigInt(`0x${Buffer.from(signature, 'base64url').subarray(32).toString('hex')}`);
  return s <= P256_ORDER >> 1n;
}

async function keyJwk(alg: 'ES256' | 'RS256') {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: `${alg.toLowerCase()}-key`, alg };
}

let counter = 0;
async function signedUp(server: TestServer): Promise<string> {
  const res = await call(server, 'POST', '/auth/v1/signup', {
    body: { email: `spelling${++counter}-${Date.now()}@example.com`, password: 'correct horse battery' },
  });
  expect(res.status).toBe(200);
  return res.body.access_token as string;
}

async function statuses(server: TestServer, token: string) {
  const headers = { authorization: `Bearer ${token}` };
  const user = await call(server, 'GET', '/auth/v1/user', { headers });
  const rest = await call(server, 'GET', '/rest/v1/workspaces?select=id', { headers });
  return [user.status, rest.status];
}

describe.each([
  ['ES256', async () => ({ JWT_KEYS: JSON.stringify([await keyJwk('ES256')]) })],
  ['RS256', async () => ({ JWT_KEYS: JSON.stringify([await keyJwk('RS256')]) })],
  ['HS256', async () => ({})],
] as const)('tokens signed with %s', (alg, env) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(await env());
  });
  afterAll(async () => server?.close());

  test('every spelling but the canonical one is refused with 401, by /user and the data API', async () => {
    const token = await signedUp(server);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    expect(JSON.parse(Buffer.from(header, 'base64url').toString()).alg).toBe(alg);
    const signatures = spellings(signature);
    if (alg === 'ES256') signatures.push(...spellings(otherS(signature)));
    // ES256 (64 bytes): 4 spare bits x 2 values of s; RS256 (256 bytes): 4; HS256 (32 bytes): 2.
    expect(signatures).toHaveLength({ ES256: 32, RS256: 16, HS256: 4 }[alg]);
    expect(new Set(signatures).size).toBe(signatures.length);
    expect(await statuses(server, token)).toEqual([200, 200]);
    for (const variant of signatures.slice(1)) {
      expect([variant, await statuses(server, `${header}.${payload}.${variant}`)]).toEqual([
        variant,
        [401, 401],
      ]);
    }
    // The header's and payload's other spellings too.
    for (const variant of spellings(payload).slice(1)) {
      expect(await statuses(server, `${header}.${variant}.${signature}`)).toEqual([401, 401]);
    }
    // The canonical token still works after all the refusals.
    expect(await statuses(server, token)).toEqual([200, 200]);
  });

  if (alg === 'ES256') {
    test('every ES256 token issued is low-S, so it verifies', async () => {
      for (let i = 0; i < 24; i++) {
        const token = await signedUp(server);
        expect(isLowS(token.split('.')[2]!)).toBe(true);
      }
    });
  }
});
