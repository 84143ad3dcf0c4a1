// Which providers are configured: GoTrue's EXTERNAL_<PROVIDER>_* variables, refused at start-up
// when incomplete or when a provider would be spoken to over plain http across a network.
import { describe, expect, test } from 'vitest';
import { parseOAuthProviders } from '../../src/server/identity/oauth/providers.js';

const AUTH = 'https://auth.example.com';
const google = {
  EXTERNAL_GOOGLE_ENABLED: 'true',
  EXTERNAL_GOOGLE_CLIENT_ID: 'id',
  EXTERNAL_GOOGLE_SECRET: 's',
};

describe('parseOAuthProviders', () => {
  test('nothing enabled, nothing configured', () => {
    expect(parseOAuthProviders({}, AUTH)).toEqual([]);
    expect(parseOAuthProviders({ EXTERNAL_GOOGLE_ENABLED: 'false' }, AUTH)).toEqual([]);
  });

  test('defaults: issuer, callback and scopes of each provider', () => {
    const [g] = parseOAuthProviders(google, AUTH);
    expect(g).toMatchObject({
      name: 'google',
      label: 'Google',
      kind: 'oidc',
      issuer: 'https://accounts.google.com',
      redirectUri: 'https://auth.example.com/auth/v1/callback',
    });
    const [gh] = parseOAuthProviders(
      { EXTERNAL_GITHUB_ENABLED: 'true', EXTERNAL_GITHUB_CLIENT_ID: 'id', EXTERNAL_GITHUB_SECRET: 's' },
      AUTH,
    );
    expect(gh).toMatchObject({
      kind: 'github',
      issuer: 'https://github.com',
      apiUrl: 'https://api.github.com',
    });
    const [ghe] = parseOAuthProviders(
      {
        EXTERNAL_GITHUB_ENABLED: 'true',
        EXTERNAL_GITHUB_CLIENT_ID: 'id',
        EXTERNAL_GITHUB_SECRET: 's',
        EXTERNAL_GITHUB_URL: 'https://git.corp.example/',
      },
      AUTH,
    );
    expect(ghe!.apiUrl).toBe('https://git.corp.example/api/v3');
  });

  test('Microsoft names its tenant; GitLab may be self-hosted; a generic issuer has its own button name', () => {
    const providers = parseOAuthProviders(
      {
        EXTERNAL_AZURE_ENABLED: 'true',
        EXTERNAL_AZURE_CLIENT_ID: 'id',
        EXTERNAL_AZURE_SECRET: 's',
        EXTERNAL_AZURE_URL: 'https://login.microsoftonline.com/tenant-id',
        EXTERNAL_GITLAB_ENABLED: 'true',
        EXTERNAL_GITLAB_CLIENT_ID: 'id',
        EXTERNAL_GITLAB_SECRET: 's',
        EXTERNAL_GITLAB_URL: 'https://gitlab.corp.example',
        EXTERNAL_OIDC_ENABLED: 'true',
        EXTERNAL_OIDC_CLIENT_ID: 'id',
        EXTERNAL_OIDC_SECRET: 's',
        EXTERNAL_OIDC_URL: 'https://sso.corp.example/realms/main',
        EXTERNAL_OIDC_NAME: 'Corp SSO',
      },
      AUTH,
    );
    expect(providers.map((p) => [p.name, p.issuer, p.label])).toEqual([
      ['azure', 'https://login.microsoftonline.com/tenant-id/v2.0', 'Microsoft'],
      ['gitlab', 'https://gitlab.corp.example', 'GitLab'],
      ['oidc', 'https://sso.corp.example/realms/main', 'Corp SSO'],
    ]);
  });

  test('an enabled provider without client id, secret or required URL is refused, naming the variable', () => {
    expect(() => parseOAuthProviders({ EXTERNAL_GOOGLE_ENABLED: 'true' }, AUTH)).toThrow(
      'EXTERNAL_GOOGLE_CLIENT_ID is required',
    );
    expect(() =>
      parseOAuthProviders({ EXTERNAL_GOOGLE_ENABLED: 'true', EXTERNAL_GOOGLE_CLIENT_ID: 'id' }, AUTH),
    ).toThrow('EXTERNAL_GOOGLE_SECRET is required');
    expect(() =>
      parseOAuthProviders(
        { EXTERNAL_AZURE_ENABLED: 'true', EXTERNAL_AZURE_CLIENT_ID: 'id', EXTERNAL_AZURE_SECRET: 's' },
        AUTH,
      ),
    ).toThrow('EXTERNAL_AZURE_URL is required');
    expect(() => parseOAuthProviders({ EXTERNAL_GOOGLE_ENABLED: 'maybe' }, AUTH)).toThrow(
      'EXTERNAL_GOOGLE_ENABLED must be true or false',
    );
  });

  test('http only for a provider on this machine', () => {
    const http = (url: string) => parseOAuthProviders({ ...google, EXTERNAL_GOOGLE_URL: url }, AUTH);
    expect(http('http://127.0.0.1:9999')[0]!.issuer).toBe('http://127.0.0.1:9999');
    expect(http('http://localhost:9999')[0]!.issuer).toBe('http://localhost:9999');
    expect(() => http('http://accounts.example.com')).toThrow('must be an https:// URL');
    expect(() => http('http://127.0.0.1.evil.example')).toThrow('must be an https:// URL');
    expect(() => http('https://user:pass@accounts.example.com')).toThrow('credentials');
    expect(() => http('not a url')).toThrow('absolute URL');
    expect(() =>
      parseOAuthProviders({ ...google, EXTERNAL_GOOGLE_REDIRECT_URI: 'http://app.example.com/cb' }, AUTH),
    ).toThrow('EXTERNAL_GOOGLE_REDIRECT_URI must be an https:// URL');
  });
});
