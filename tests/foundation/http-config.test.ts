// The HTTP edge's settings: production defaults, the per-address connection cap lifted to the
// total behind a trusted proxy (every connection then comes from the proxy), and settings that
// contradict each other or leave no bound refused at start with the variable named.
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

describe('HTTP edge settings', () => {
  test('production defaults bound every connection', async () => {
    const config = await loadConfig(production);
    expect(config.http).toEqual({
      maxConnections: 4096,
      maxConnectionsPerAddress: 256,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      idleTimeoutMs: 60_000,
    });
    expect(config.web).toEqual({ callerConcurrency: 4, addressConcurrency: 12 });
    expect(config.dataApi.addressConcurrency).toBe(8);
  });

  test('behind a trusted proxy the per-address cap defaults to the total; given, it is kept', async () => {
    expect((await loadConfig({ ...production, TRUST_PROXY: 'true' })).http.maxConnectionsPerAddress).toBe(
      4096,
    );
    const given = await loadConfig({
      ...production,
      TRUST_PROXY: 'true',
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: '64',
    });
    expect(given.http.maxConnectionsPerAddress).toBe(64);
  });

  test('a per-address cap above the total is the total', async () => {
    const config = await loadConfig({
      ...production,
      HTTP_MAX_CONNECTIONS: '100',
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: '500',
    });
    expect(config.http.maxConnectionsPerAddress).toBe(100);
  });

  test('a headers timeout longer than the request timeout is refused', async () => {
    const message = await refusal({ HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '10000' });
    expect(message).toContain('HTTP_HEADERS_TIMEOUT_MS');
  });

  test('zero, negative or non-numeric limits are refused, naming the variable', async () => {
    for (const [name, value] of [
      ['HTTP_MAX_CONNECTIONS', '0'],
      ['HTTP_MAX_CONNECTIONS_PER_ADDRESS', '-1'],
      ['HTTP_IDLE_TIMEOUT_MS', 'soon'],
      ['HTTP_KEEP_ALIVE_TIMEOUT_MS', '0'],
      ['WEB_CALLER_CONCURRENCY', '0'],
      ['DATA_API_ADDRESS_CONCURRENCY', '1.5'],
    ] as const) {
      expect(await refusal({ [name]: value }), name).toContain(name);
    }
  });
});
