// The pieces of outgoing webhooks that need no database: signatures verify with the reference
// standardwebhooks library (and fail with any change), the address guard's ranges, the retry
// schedule's jitter, and the configuration's defaults and refusals.
import { Webhook } from 'standardwebhooks';
import { expect, test } from 'vitest';
import { loadConfig } from '../../src/server/config.js';
import {
  checkResolvedUrl,
  isRefusedAddress,
  RefusedDestination,
} from '../../src/server/webhooks/destination.js';
import { retryDelaySeconds } from '../../src/server/webhooks/delivery.js';
import { signedHeaders } from '../../src/server/webhooks/signing.js';

const secret = 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64');

test('signatures verify with standardwebhooks, and not after any change', () => {
  const body = JSON.stringify({
    type: 'project.created',
    timestamp: new Date().toISOString(),
    data: { a: 1 },
  });
  const headers = signedHeaders(secret, 'msg_abc', body);
  expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
  expect(new Webhook(secret).verify(body, headers)).toMatchObject({ type: 'project.created' });
  expect(() => new Webhook(secret).verify(body.replace('1', '2'), headers)).toThrow();
  expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'msg_abd' })).toThrow();
  // A stale timestamp is refused by receivers (replay protection).
  const old = signedHeaders(secret, 'msg_abc', body, new Date(Date.now() - 3600_000));
  expect(() => new Webhook(secret).verify(body, old)).toThrow();
});

test('the guard refuses internal addresses and lets public ones through', () => {
  for (const a of [
    '127.0.0.1',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fd12::1',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '64:ff9b::a00:1',
    'not an address',
  ])
    expect(isRefusedAddress(a), a).toBe(true);
  for (const a of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111'])
    expect(isRefusedAddress(a), a).toBe(false);
});

test('retries wait on the schedule, varied by at most 20%, and stop after its end', () => {
  const schedule = [5, 300, 1800];
  expect(retryDelaySeconds(schedule, 1, () => 0)).toBe(4);
  expect(retryDelaySeconds(schedule, 1, () => 1)).toBeCloseTo(6, 9);
  expect(retryDelaySeconds(schedule, 2, () => 0.5)).toBe(300);
  expect(retryDelaySeconds(schedule, 4)).toBeNull();
});

test('configuration: defaults, https in production, and a bad schedule refused by name', async () => {
  const base = {
    DATABASE_URL: 'postgres://x@localhost/db',
    JWT_SECRET: 'x'.repeat(40),
    PROJECT_API_KEY: 'anon_' + 'a'.repeat(30),
    SERVICE_ROLE_KEY: 'service_' + 'b'.repeat(30),
    PAYMENT_WEBHOOK_SECRET: 'whsec_' + 'c'.repeat(30),
    CRON_SECRET: 'd'.repeat(40),
    APP_URL: 'https://app.example.com',
    MAIL_DELIVERY: 'outbox',
  };
  const config = await loadConfig(base);
  expect(config.webhooks).toEqual({
    allowPrivateDestinations: false,
    allowedHosts: [],
    requireHttps: true,
    retrySchedule: [5, 300, 1800, 7200, 18000, 36000, 36000],
    timeoutMs: 10000,
    disableAfterFailedMessages: 20,
    disableAfterDays: 5,
    logRetentionDays: 30,
  });
  const open = await loadConfig({
    ...base,
    WEBHOOKS_ALLOW_PRIVATE: 'true',
    WEBHOOKS_RETRY_SCHEDULE: '0.5, 2',
  });
  expect(open.webhooks).toMatchObject({
    allowPrivateDestinations: true,
    requireHttps: false,
    retrySchedule: [0.5, 2],
  });
  await expect(loadConfig({ ...base, WEBHOOKS_RETRY_SCHEDULE: '5,soon' })).rejects.toThrow(
    /WEBHOOKS_RETRY_SCHEDULE/,
  );
});

test('before registering, a name resolving to an internal address is refused (the database cannot resolve)', async () => {
  const strict = { allowPrivate: false, allowedHosts: [] };
  for (const url of [
    'http://localhost/hook',
    'http://localhost:8080/hook',
    'http://127.0.0.1/x',
    'http://[::1]/x',
  ]) {
    await expect(checkResolvedUrl(url, strict), url).rejects.toBeInstanceOf(RefusedDestination);
  }
  await expect(checkResolvedUrl('gopher://example.com/', strict)).rejects.toBeInstanceOf(RefusedDestination);
  await expect(
    checkResolvedUrl('http://localhost/hook', { allowPrivate: true, allowedHosts: [] }),
  ).resolves.toBeUndefined();
  await expect(
    checkResolvedUrl('http://localhost/hook', { allowPrivate: false, allowedHosts: ['localhost'] }),
  ).resolves.toBeUndefined();
  // A name that does not resolve (yet) is left to the check at delivery.
  await expect(checkResolvedUrl('https://no-such-host.invalid/hook', strict)).resolves.toBeUndefined();
});
