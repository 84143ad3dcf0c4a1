// STORAGE_BACKEND and its settings are validated at start: an S3 backend without a bucket or with
// half an access key stops the start naming the variable, and the secret key never appears when
// the configuration is logged or serialised.
import { inspect } from 'node:util';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../../src/server/config.js';

const production = {
  DATABASE_URL: 'postgres://x@localhost/db',
  JWT_SECRET: 'j'.repeat(40),
  PROJECT_API_KEY: 'p'.repeat(30),
  SERVICE_ROLE_KEY: 's'.repeat(30),
  PAYMENT_WEBHOOK_SECRET: 'whsec_' + 'w'.repeat(20),
  CRON_SECRET: 'c'.repeat(30),
};

async function refusal(env: Record<string, string>): Promise<string> {
  const error = await loadConfig({ ...production, ...env }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ConfigError);
  return (error as Error).message;
}

describe('storage backend settings', () => {
  test('local disk by default, under DATA_DIR/storage; STORAGE_LOCAL_DIR moves it', async () => {
    const defaults = await loadConfig({ ...production, DATA_DIR: '/srv/tenantry' });
    expect(defaults.storageBackend).toEqual({ kind: 'local', dir: path.resolve('/srv/tenantry/storage') });
    const moved = await loadConfig({ ...production, STORAGE_LOCAL_DIR: 'files' });
    expect(moved.storageBackend).toEqual({ kind: 'local', dir: path.resolve('files') });
  });

  test('S3 needs a valid bucket, and the access key whole or not at all', async () => {
    expect(await refusal({ STORAGE_BACKEND: 's3' })).toContain('STORAGE_S3_BUCKET');
    expect(await refusal({ STORAGE_BACKEND: 's3', STORAGE_S3_BUCKET: 'No_Such' })).toContain(
      'STORAGE_S3_BUCKET',
    );
    expect(await refusal({ STORAGE_BACKEND: 'gcs' })).toContain('STORAGE_BACKEND');
    expect(await refusal({ STORAGE_BACKEND: 's3', STORAGE_S3_ENDPOINT: 'ftp://x' })).toContain(
      'STORAGE_S3_ENDPOINT',
    );
    const half = await refusal({
      STORAGE_BACKEND: 's3',
      STORAGE_S3_BUCKET: 'files',
      STORAGE_S3_SECRET_ACCESS_KEY: 'secret-value-123',
    });
    expect(half).toContain('STORAGE_S3_ACCESS_KEY_ID');
    expect(half).not.toContain('secret-value-123');
  });

  test('an S3-compatible endpoint gets path-style addressing; AWS itself keeps virtual hosts', async () => {
    const custom = await loadConfig({
      ...production,
      STORAGE_BACKEND: 's3',
      STORAGE_S3_BUCKET: 'files',
      STORAGE_S3_ENDPOINT: 'http://127.0.0.1:9000',
    });
    expect(custom.storageBackend).toMatchObject({
      kind: 's3',
      endpoint: 'http://127.0.0.1:9000',
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: undefined,
    });
    const aws = await loadConfig({
      ...production,
      STORAGE_BACKEND: 's3',
      STORAGE_S3_BUCKET: 'files',
      STORAGE_S3_REGION: 'eu-west-3',
    });
    expect(aws.storageBackend).toMatchObject({
      endpoint: undefined,
      region: 'eu-west-3',
      forcePathStyle: false,
    });
  });

  test('the secret access key is usable but never logged or serialised', async () => {
    const config = await loadConfig({
      ...production,
      STORAGE_BACKEND: 's3',
      STORAGE_S3_BUCKET: 'files',
      STORAGE_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      STORAGE_S3_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI-very-secret',
    });
    const settings = config.storageBackend;
    if (settings.kind !== 's3') throw new Error('expected S3 settings');
    expect(settings.credentials?.secretAccessKey).toBe('wJalrXUtnFEMI-very-secret');
    expect(JSON.stringify(config)).not.toContain('wJalrXUtnFEMI');
    expect(inspect(config, { depth: 10 })).not.toContain('wJalrXUtnFEMI');
    expect(JSON.stringify(config)).toContain('AKIAEXAMPLE');
  });
});
