// Key comparison: the keys' digests are made once, each presented value is hashed once, and the
// answers are those of a plain comparison (which key, if any) for keys and guesses of any length.
import { expect, test } from 'vitest';
import { createTokenSigner } from '../../src/server/identity/access-tokens.js';
import { resolveCaller } from '../../src/server/identity/caller.js';
import { secretsEqual } from '../../src/server/identity/secrets.js';

const keys = { projectApiKey: 'anon_public_key_0123456789', serviceRoleKey: 'service_secret_key_abcdef' };
const signer = createTokenSigner({
  secret: 'a-secret-of-at-least-thirty-two-characters!',
  issuer: 'http://x/auth/v1',
  ttlSeconds: 3600,
  keys: null,
  acceptSecret: true,
});
const headers = (values: Record<string, string>) => new Headers(values);

test('secretsEqual is plain equality', () => {
  expect(secretsEqual('abc', 'abc')).toBe(true);
  expect(secretsEqual('abc', 'abd')).toBe(false);
  expect(secretsEqual('ab', 'abc')).toBe(false);
  expect(secretsEqual('', '')).toBe(true);
  expect(secretsEqual('ü', 'u')).toBe(false);
});

test('the apikey and a key as bearer decide the role; anything else is refused', async () => {
  for (let round = 0; round < 3; round++) {
    // the same keys object again: its digests come from the first call
    expect((await resolveCaller(headers({ apikey: keys.projectApiKey }), keys, signer)).kind).toBe('anon');
    expect((await resolveCaller(headers({ apikey: keys.serviceRoleKey }), keys, signer)).kind).toBe(
      'service',
    );
    expect(
      (
        await resolveCaller(
          headers({ apikey: keys.projectApiKey, authorization: `Bearer ${keys.serviceRoleKey}` }),
          keys,
          signer,
        )
      ).kind,
    ).toBe('service');
  }
  for (const wrong of [
    keys.projectApiKey.slice(0, -1),
    `${keys.projectApiKey}x`,
    keys.projectApiKey.toUpperCase(),
  ]) {
    await expect(resolveCaller(headers({ apikey: wrong }), keys, signer)).rejects.toMatchObject({
      status: 401,
    });
  }
  const other = { projectApiKey: 'another_public_key', serviceRoleKey: 'another_service_key' };
  await expect(resolveCaller(headers({ apikey: keys.projectApiKey }), other, signer)).rejects.toMatchObject({
    status: 401,
  });
  expect((await resolveCaller(headers({ apikey: other.projectApiKey }), other, signer)).kind).toBe('anon');
});
