// Configuration is validated once at boot: production needs every secret, bad values are named,
// and local mode generates development secrets once and reuses them.
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../../src/server/config.js';

const secrets = {
  JWT_SECRET: 'j'.repeat(40),
  PROJECT_API_KEY: 'p'.repeat(30),
  SERVICE_ROLE_KEY: 's'.repeat(30),
  PAYMENT_WEBHOOK_SECRET: 'whsec_' + 'w'.repeat(20),
  CRON_SECRET: 'c'.repeat(30),
};

describe('production mode (DATABASE_URL set)', () => {
  test('missing secrets stop start-up, naming each one', async () => {
    const error = await loadConfig({
      DATABASE_URL: 'postgres://x@localhost/db',
      JWT_SECRET: 'j'.repeat(40),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ['PROJECT_API_KEY', 'SERVICE_ROLE_KEY', 'PAYMENT_WEBHOOK_SECRET', 'CRON_SECRET']) {
      expect(message).toContain(name);
    }
    expect(message).not.toContain('JWT_SECRET');
  });

  test('with every secret given, nothing is generated and defaults apply', async () => {
    const config = await loadConfig({ DATABASE_URL: 'postgres://x@localhost/db', ...secrets });
    expect(config.mode).toBe('production');
    expect(config.autoconfirm).toBe(false);
    expect(config.accessTokenTtlSeconds).toBe(3600);
    expect(config.appUrl).toBe('http://localhost:3000');
    expect(config.jwtIssuer).toBe('http://localhost:3000/auth/v1');
  });

  test.each([
    ['PORT', { PORT: 'abc' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://nope' }],
    ['JWT_SECRET', { JWT_SECRET: 'short' }],
    ['APP_URL', { APP_URL: 'not a url' }],
    ['AUTH_AUTOCONFIRM', { AUTH_AUTOCONFIRM: 'maybe' }],
    ['BILLING_PLANS', { BILLING_PLANS: 'not json' }],
    ['BILLING_PLANS', { BILLING_PLANS: '[{"id":"pro","name":"Pro","priceId":"prod_x"}]' }],
    ['SCHEDULER_TIMEZONE', { SCHEDULER_TIMEZONE: 'Mars/Olympus' }],
    ['SITE_URL', { SITE_URL: 'app.example.com' }],
    ['URI_ALLOW_LIST', { URI_ALLOW_LIST: 'https://ok.example.com/**, https://{a,b.example.com' }],
    ['MAILER_OTP_EXP', { MAILER_OTP_EXP: '86401' }],
    ['MAILER_OTP_LENGTH', { MAILER_OTP_LENGTH: '4' }],
    ['SMTP_MAX_FREQUENCY', { SMTP_MAX_FREQUENCY: 'soon' }],
    ['SECURE_EMAIL_CHANGE', { SECURE_EMAIL_CHANGE: 'perhaps' }],
    ['EXTERNAL_GITHUB_SECRET', { EXTERNAL_GITHUB_ENABLED: 'true', EXTERNAL_GITHUB_CLIENT_ID: 'id' }],
    ['SECURITY_MANUAL_LINKING_ENABLED', { SECURITY_MANUAL_LINKING_ENABLED: 'sometimes' }],
    ['DATA_API_SCHEMAS', { DATA_API_SCHEMAS: 'public,auth' }],
    ['DATA_API_SCHEMAS', { DATA_API_SCHEMAS: 'public,internal' }],
    ['DATA_API_SCHEMAS', { DATA_API_SCHEMAS: 'pg_catalog' }],
    ['DATA_API_SCHEMAS', { DATA_API_SCHEMAS: 'public;drop' }],
    ['DATA_API_SCHEMAS', { DATA_API_SCHEMAS: 'public,public' }],
    ['DATA_API_TX_END', { DATA_API_TX_END: 'sometimes' }],
    ['DATA_API_PLAN_ENABLED', { DATA_API_PLAN_ENABLED: 'perhaps' }],
  ])('a bad %s is named in the error', async (name, bad) => {
    const error = await loadConfig({ DATABASE_URL: 'postgres://x@localhost/db', ...secrets, ...bad }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(name);
  });

  test('the e-mail lifecycle settings: GoTrue defaults, and what can be set', async () => {
    const defaults = await loadConfig({ DATABASE_URL: 'postgres://x@localhost/db', ...secrets });
    expect(defaults.authEmail).toMatchObject({
      siteUrl: 'http://localhost:3000',
      uriAllowList: [],
      otpExpirySeconds: 3600,
      otpLength: 6,
      otpMaxAttempts: 5,
      maxFrequencySeconds: 60,
      secureEmailChange: true,
      securePasswordChange: false,
      productName: 'Tenantry',
    });
    expect(defaults.rateLimits).toMatchObject({
      emailSentPerHour: 30,
      otpFailuresPerEmail: 20,
      verifyFailuresPerAddress: 30,
      refreshTracesPerAddress: 30,
    });
    const set = await loadConfig({
      DATABASE_URL: 'postgres://x@localhost/db',
      ...secrets,
      APP_URL: 'https://api.example.com',
      SITE_URL: 'https://app.example.com/',
      URI_ALLOW_LIST: ' https://*.example.com/** ,, myapp://callback ',
      SMTP_MAX_FREQUENCY: '2m',
      MAILER_OTP_LENGTH: '8',
      PRODUCT_NAME: 'Rocket',
    });
    expect(set.authEmail).toMatchObject({
      siteUrl: 'https://app.example.com',
      uriAllowList: ['https://*.example.com/**', 'myapp://callback'],
      maxFrequencySeconds: 120,
      otpLength: 8,
      productName: 'Rocket',
    });
  });

  test('the data API exposes public, commits and hides plans unless told otherwise', async () => {
    const defaults = await loadConfig({ DATABASE_URL: 'postgres://x@localhost/db', ...secrets });
    expect(defaults.dataApi).toMatchObject({ schemas: ['public'], txEnd: 'commit', planEnabled: false });
    const set = await loadConfig({
      DATABASE_URL: 'postgres://x@localhost/db',
      ...secrets,
      DATA_API_SCHEMAS: 'public, personal',
      DATA_API_TX_END: 'commit-allow-override',
      DATA_API_PLAN_ENABLED: 'true',
    });
    expect(set.dataApi).toMatchObject({
      schemas: ['public', 'personal'],
      txEnd: 'commit-allow-override',
      planEnabled: true,
    });
  });

  test("the web app's file limits: defaults, a list of types, any type, and bad values named", async () => {
    const base = { DATABASE_URL: 'postgres://x@localhost/db', ...secrets };
    const defaults = (await loadConfig(base)).appFiles;
    expect(defaults.pictureMaxBytes).toBe(2 * 1024 * 1024);
    expect(defaults.projectFileMaxBytes).toBe(50 * 1024 * 1024);
    expect(defaults.projectFileTypes).toContain('application/pdf');
    expect(defaults.projectFileTypes).not.toContain('application/octet-stream');
    const listed = await loadConfig({ ...base, APP_PROJECT_FILE_TYPES: 'image/*, Text/Plain' });
    expect(listed.appFiles.projectFileTypes).toEqual(['image/*', 'text/plain']);
    expect((await loadConfig({ ...base, APP_PROJECT_FILE_TYPES: '*' })).appFiles.projectFileTypes).toBeNull();
    await expect(loadConfig({ ...base, APP_PROJECT_FILE_TYPES: 'pdf' })).rejects.toThrow(
      /APP_PROJECT_FILE_TYPES/,
    );
    await expect(loadConfig({ ...base, APP_PICTURE_MAX_BYTES: '0' })).rejects.toThrow(
      /APP_PICTURE_MAX_BYTES/,
    );
  });

  test('image transformations: on by default with their bounds, off by choice, bad values named', async () => {
    const base = { DATABASE_URL: 'postgres://x@localhost/db', ...secrets, DATA_DIR: '/srv/tenantry' };
    const defaults = (await loadConfig(base)).storageImages;
    expect(defaults).toEqual({
      enabled: true,
      maxSourceBytes: 25 * 1024 * 1024,
      maxPixels: 50_000_000,
      maxDimension: 2500,
      concurrency: 1,
      queue: 32,
      cacheBytes: 256 * 1024 * 1024,
      cacheDir: '/srv/tenantry/image-cache',
    });
    const off = await loadConfig({
      ...base,
      STORAGE_IMAGE_TRANSFORMATION: 'off',
      STORAGE_IMAGE_CACHE_BYTES: '0',
    });
    expect([off.storageImages.enabled, off.storageImages.cacheBytes]).toEqual([false, 0]);
    for (const [name, value] of [
      ['STORAGE_IMAGE_TRANSFORMATION', 'maybe'],
      ['STORAGE_IMAGE_MAX_PIXELS', '0'],
      ['STORAGE_IMAGE_MAX_DIMENSION', '100000'],
      ['STORAGE_IMAGE_CONCURRENCY', 'two'],
      ['STORAGE_IMAGE_QUEUE', '-1'],
    ] as const) {
      await expect(loadConfig({ ...base, [name]: value }), name).rejects.toThrow(new RegExp(name));
    }
  });

  test('passkeys: the relying party follows APP_URL, can be named, and one browsers would refuse stops start-up', async () => {
    const base = {
      DATABASE_URL: 'postgres://x@localhost/db',
      ...secrets,
      APP_URL: 'https://app.example.com/',
    };
    expect((await loadConfig(base)).webauthn).toEqual({
      passkeysEnabled: true,
      mfaEnrollEnabled: true,
      mfaVerifyEnabled: true,
      rpId: 'app.example.com',
      rpDisplayName: 'Tenantry',
      rpOrigins: ['https://app.example.com'],
      challengeExpirySeconds: 300,
      maxPasskeysPerUser: 10,
      ceremoniesPerAddress: 30,
    });
    const shared = await loadConfig({
      ...base,
      WEBAUTHN_RP_ID: 'Example.com',
      WEBAUTHN_RP_ORIGINS: 'https://app.example.com, https://example.com',
      WEBAUTHN_CHALLENGE_EXPIRY: '2m',
      PASSKEY_ENABLED: 'false',
    });
    expect(shared.webauthn).toMatchObject({
      passkeysEnabled: false,
      rpId: 'example.com',
      rpOrigins: ['https://app.example.com', 'https://example.com'],
      challengeExpirySeconds: 120,
    });
    for (const [name, value] of [
      ['WEBAUTHN_RP_ID', 'other.example.net'],
      ['WEBAUTHN_RP_ID', 'https://example.com'],
      ['WEBAUTHN_RP_ORIGINS', 'not a url'],
      ['WEBAUTHN_CHALLENGE_EXPIRY', '5'],
      ['PASSKEY_MAX_PASSKEYS_PER_USER', '0'],
    ] as const) {
      await expect(loadConfig({ ...base, [name]: value }), `${name}=${value}`).rejects.toThrow(
        new RegExp(name),
      );
    }
  });

  test('the public and service keys must differ', async () => {
    await expect(
      loadConfig({
        DATABASE_URL: 'postgres://x@localhost/db',
        ...secrets,
        SERVICE_ROLE_KEY: secrets.PROJECT_API_KEY,
      }),
    ).rejects.toThrow(/must differ/);
  });
});

describe('local mode (no DATABASE_URL)', () => {
  test('generates secrets once, keeps them private on disk, and reuses them', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'tenantry-config-'));
    const first = await loadConfig({ DATA_DIR: dataDir });
    const second = await loadConfig({ DATA_DIR: dataDir });
    expect(first.mode).toBe('local');
    expect(first.autoconfirm).toBe(true);
    expect(second.jwtSecret).toBe(first.jwtSecret);
    expect(second.projectApiKey).toBe(first.projectApiKey);
    expect(second.cronSecret).toBe(first.cronSecret);
    expect(first.paymentWebhookSecret).toMatch(/^whsec_/);
    expect(decodeJwt(first.projectApiKey).role).toBe('anon');
    expect(decodeJwt(first.serviceRoleKey).role).toBe('service_role');
    const file = path.join(dataDir, 'dev-secrets.json');
    expect(statSync(file).mode & 0o077).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8')).JWT_SECRET).toBe(first.jwtSecret);
  });

  test('an explicit secret overrides the generated one', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'tenantry-config-'));
    const config = await loadConfig({ DATA_DIR: dataDir, CRON_SECRET: 'my-own-cron-secret-123' });
    expect(config.cronSecret).toBe('my-own-cron-secret-123');
  });
});
