// Which issuers the ID token grant accepts, read from GoTrue's EXTERNAL_* variables: client id
// lists, Apple's bundle id, Facebook's nonce exception, and the start-up refusals.
import { describe, expect, test } from 'vitest';
import { parseIdTokenSettings } from '../../src/server/identity/oauth/id-token-providers.js';

const byName = (env: Record<string, string>, name: string) =>
  parseIdTokenSettings(env).providers.find((p) => p.name === name)!;

describe('parseIdTokenSettings', () => {
  test('nothing configured: every provider known and disabled, no other issuer allowed', () => {
    const settings = parseIdTokenSettings({});
    expect(settings.providers.map((p) => [p.name, p.enabled])).toEqual([
      ['google', false],
      ['apple', false],
      ['azure', false],
      ['facebook', false],
      ['keycloak', false],
      ['oidc', false],
      ['kakao', false],
    ]);
    expect(settings.allowedIssuers).toEqual([]);
  });

  test("client id lists, Apple's bundle id, the skip switches and Facebook's fixed exception", () => {
    const env = {
      EXTERNAL_GOOGLE_ENABLED: 'true',
      EXTERNAL_GOOGLE_CLIENT_ID: 'web, ios ,android',
      EXTERNAL_GOOGLE_SKIP_NONCE_CHECK: 'true',
      EXTERNAL_APPLE_ENABLED: 'true',
      EXTERNAL_APPLE_CLIENT_ID: 'com.example.web',
      EXTERNAL_IOS_BUNDLE_ID: 'com.example.app',
      EXTERNAL_FACEBOOK_ENABLED: 'true',
      EXTERNAL_FACEBOOK_CLIENT_ID: '1234',
    };
    expect(byName(env, 'google')).toMatchObject({
      clientIds: ['web', 'ios', 'android'],
      skipNonceCheck: true,
      jwksUrl: 'https://www.googleapis.com/oauth2/v3/certs',
    });
    expect(byName(env, 'apple').clientIds).toEqual(['com.example.web', 'com.example.app']);
    expect(byName(env, 'apple').skipNonceCheck).toBe(false);
    expect(byName(env, 'facebook').skipNonceCheck).toBe(true);
  });

  test('Keycloak and the OIDC issuer are named by their URL, which must be given', () => {
    expect(() => parseIdTokenSettings({ EXTERNAL_KEYCLOAK_ENABLED: 'true' })).toThrow(
      'EXTERNAL_KEYCLOAK_URL is required when EXTERNAL_KEYCLOAK_ENABLED is true',
    );
    const keycloak = byName(
      { EXTERNAL_KEYCLOAK_ENABLED: 'true', EXTERNAL_KEYCLOAK_URL: 'https://sso.example.com/realms/acme' },
      'keycloak',
    );
    expect(keycloak).toMatchObject({ issuers: ['https://sso.example.com/realms/acme'], jwksUrl: null });
  });

  test('issuers and key URLs over plain http across a network are refused at start-up', () => {
    expect(() =>
      parseIdTokenSettings({ EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS: 'http://issuer.example.com' }),
    ).toThrow(/https/);
    expect(() => parseIdTokenSettings({ EXTERNAL_GOOGLE_JWKS_URL: 'http://keys.example.com/jwks' })).toThrow(
      /EXTERNAL_GOOGLE_JWKS_URL/,
    );
    expect(() => parseIdTokenSettings({ EXTERNAL_APPLE_ENABLED: 'maybe' })).toThrow(
      'EXTERNAL_APPLE_ENABLED must be true or false',
    );
    expect(
      parseIdTokenSettings({
        EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS: 'https://a.example.com, http://127.0.0.1:9000',
      }).allowedIssuers,
    ).toEqual(['https://a.example.com', 'http://127.0.0.1:9000']);
  });
});
