// With the database unreachable, every API fails fast with 503 and a clear body (no crash, no
// hang), and readiness reports it; liveness stays up.
import { createServer } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { envelope, sign } from '../support/stripe-events.js';

let server: TestServer;
beforeAll(async () => {
  // A port nobody listens on: connections are refused at once.
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const p = (probe.address() as { port: number }).port;
      probe.close(() => resolve(p));
    });
  });
  server = await startTestServer({ DATABASE_URL: `postgres://nobody:x@127.0.0.1:${port}/none` });
});
afterAll(async () => server?.close());

test('identity answers 503 database_unavailable quickly', async () => {
  const started = Date.now();
  const res = await call(server, 'POST', '/auth/v1/token?grant_type=password', {
    body: { email: 'a@example.com', password: 'whatever pw' },
  });
  expect(res.status).toBe(503);
  expect(res.body.error_code).toBe('database_unavailable');
  expect(res.headers.get('retry-after')).toBe('5');
  expect(Date.now() - started).toBeLessThan(5000);
});

test('the webhook answers 503 so the provider retries', async () => {
  const body = JSON.stringify(envelope('invoice.paid', { id: 'in_x' }));
  const res = await call(server, 'POST', '/api/billing/webhook', {
    rawBody: body,
    apikey: null,
    headers: { 'stripe-signature': sign(body, server.config.paymentWebhookSecret) },
  });
  expect(res.status).toBe(503);
  expect(res.body.error).toBe('database_unavailable');
});

test('readiness is 503, liveness is 200', async () => {
  expect((await call(server, 'GET', '/api/health/ready', { apikey: null })).status).toBe(503);
  expect((await call(server, 'GET', '/api/health', { apikey: null })).status).toBe(200);
});
