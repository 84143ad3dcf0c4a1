// An event is applied in one transaction whose claim rides with the begin and whose status rides
// with the commit: an event a handler does not know is two messages, and what is stored is exactly
// what was sent, however hostile its strings (they travel as literals from literals.ts).
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { PoolClient } from '../../src/server/db/pool.js';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { envelope, sign } from '../support/stripe-events.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

/** Every statement the server's connections run while fn runs. */
async function statementsDuring(fn: () => Promise<void>): Promise<string[]> {
  const statements: string[] = [];
  const restore: (() => void)[] = [];
  const onAcquire = (client: PoolClient) => {
    const query = client.query;
    client.query = ((...args: unknown[]) => {
      const first = args[0] as string | { text: string };
      statements.push(typeof first === 'string' ? first : first.text);
      return (query as (...a: unknown[]) => unknown).apply(client, args);
    }) as typeof client.query;
    restore.push(() => {
      client.query = query;
    });
  };
  server.pool.on('acquire', onAcquire);
  try {
    await fn();
  } finally {
    server.pool.off('acquire', onAcquire);
    for (const undo of restore) undo();
  }
  return statements;
}

test('an event no handler knows is recorded in two messages: begin with the claim, the status with the commit', async () => {
  const hostile = `it's a "quote", a back\\slash, E'\\x00', $1 $$ dollar $$, ✓ 😀`;
  const event = envelope('customer.created', { id: 'cus_round_trips', object: 'customer', name: hostile });
  const body = JSON.stringify(event);
  let status = 0;
  const statements = await statementsDuring(async () => {
    const res = await call(server, 'POST', '/api/billing/webhook', {
      rawBody: body,
      apikey: null,
      headers: { 'stripe-signature': sign(body, server.config.paymentWebhookSecret) },
    });
    status = res.status;
  });
  expect(status).toBe(200);
  expect(statements).toHaveLength(2);
  expect(statements[0]).toMatch(/^begin; insert into internal\.billing_events/);
  expect(statements[1]).toMatch(/^update internal\.billing_events set status = 'ignored'.*; commit$/s);

  const stored = await server.pool.query<{ payload: { data: { object: { name: string } } }; status: string }>(
    'select payload, status from internal.billing_events where id = $1',
    [event.id],
  );
  expect(stored.rows[0]?.status).toBe('ignored');
  expect(stored.rows[0]?.payload.data.object.name).toBe(hostile);
});
