// POST /api/billing/webhook: every status the spec defines, with payloads signed by the real
// stripe SDK; duplicates and concurrent duplicates have exactly one effect; unknown types are
// acknowledged and recorded (as the provider sent them); a failing handler answers 5xx and is left
// failed for a retry.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { receiveEvent, replayEvents, type HandlerRegistry } from '../../src/server/billing/events.js';
import { createLogger } from '../../src/server/logger.js';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { envelope, sign } from '../support/stripe-events.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  await server.pool.query('create table public.test_effects (event_id text, n int)');
});
afterAll(async () => server?.close());

const post = (body: string, signature?: string | null) =>
  call(server, 'POST', '/api/billing/webhook', {
    rawBody: body,
    apikey: null,
    headers:
      signature === null
        ? {}
        : { 'stripe-signature': signature ?? sign(body, server.config.paymentWebhookSecret) },
  });

const storedStatus = async (id: string) =>
  (
    await server.pool.query<{ status: string }>('select status from internal.billing_events where id = $1', [
      id,
    ])
  ).rows[0]?.status;

describe('statuses', () => {
  test('200 for a verified event; it is stored before anything else', async () => {
    const event = envelope('customer.created', { id: 'cus_1', object: 'customer' });
    const res = await post(JSON.stringify(event));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: true, id: event.id });
    expect(await storedStatus(event.id)).toBe('ignored');
  });

  test('the stored record is the event the provider signed, every field of it', async () => {
    const event = envelope('customer.updated', { id: 'cus_whole', object: 'customer', name: 'Ada "Q" ✓' });
    const res = await post(JSON.stringify(event));
    expect(res.status).toBe(200);
    const stored = await server.pool.query<{ payload: unknown }>(
      'select payload from internal.billing_events where id = $1',
      [event.id],
    );
    // api_version, livemode, pending_webhooks and request are not fields the service reads.
    expect(stored.rows[0]!.payload).toEqual(event);
  });

  test('400 without a signature header, with an empty one, or with no v1 scheme', async () => {
    const body = JSON.stringify(envelope('invoice.paid', { id: 'in_1' }));
    for (const signature of [null, '', `t=${Math.floor(Date.now() / 1000)},v0=abc`]) {
      const res = await post(body, signature);
      expect(res.status, String(signature)).toBe(400);
      expect(res.body.error).toBe('missing_signature');
    }
  });

  test('401 for a wrong secret, a tampered body and a stale timestamp; nothing stored', async () => {
    const event = envelope('invoice.paid', { id: 'in_2' });
    const body = JSON.stringify(event);
    const wrongSecret = await post(body, sign(body, 'whsec_not_the_right_secret'));
    expect(wrongSecret.status).toBe(401);
    const tampered = await post(body.replace('in_2', 'in_3'), sign(body, server.config.paymentWebhookSecret));
    expect(tampered.status).toBe(401);
    const stale = await post(
      body,
      sign(body, server.config.paymentWebhookSecret, Math.floor(Date.now() / 1000) - 301),
    );
    expect(stale.status).toBe(401);
    expect(stale.body.error).toBe('signature_expired');
    // Dated ahead of the clock: it would stay replayable for as long as it is in the future.
    const future = await post(
      body,
      sign(body, server.config.paymentWebhookSecret, Math.floor(Date.now() / 1000) + 3600),
    );
    expect(future.status).toBe(401);
    expect(future.body.error).toBe('signature_expired');
    // Within the window on either side (clocks differ a little): accepted.
    const slightlyAhead = envelope('invoice.paid', { id: 'in_ahead' });
    const aheadBody = JSON.stringify(slightlyAhead);
    const ahead = await post(
      aheadBody,
      sign(aheadBody, server.config.paymentWebhookSecret, Math.floor(Date.now() / 1000) + 60),
    );
    expect(ahead.status).toBe(200);
    expect(await storedStatus(event.id)).toBeUndefined();
  });

  test('400 for a signed body that is not JSON or not an event', async () => {
    const notJson = await post('this is not json');
    expect(notJson.status).toBe(400);
    expect(notJson.body.error).toBe('invalid_payload');
    const notEvent = await post(JSON.stringify({ hello: 'world' }));
    expect(notEvent.status).toBe(400);
    const badId = await post(JSON.stringify({ ...envelope('x.y', {}), id: "evt_1'; drop table x;--" }));
    expect(badId.status).toBe(400);
    for (const object of [null, ['cus_1'], 'cus_1', 42]) {
      const event = envelope('customer.updated', {}) as { data: { object: unknown } };
      const notAnObject = await post(JSON.stringify({ ...event, data: { object } }));
      expect(notAnObject.status, JSON.stringify(object)).toBe(400);
      expect(notAnObject.body.message).toContain('data.object');
    }
  });

  test('413 for a body over 1 MB', async () => {
    const big = JSON.stringify(
      envelope('customer.updated', { id: 'cus_big', blob: 'x'.repeat(1024 * 1024) }),
    );
    const res = await post(big);
    expect(res.status).toBe(413);
  });

  test('405 for any other method; answers carry the request id and security headers, no CORS', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await call(server, method, '/api/billing/webhook', { apikey: null });
      expect(res.status).toBe(405);
      expect(res.body).toEqual({ error: 'method_not_allowed', message: 'Use POST' });
    }
    const event = envelope('customer.created', { id: 'cus_headers', object: 'customer' });
    const res = await call(server, 'POST', '/api/billing/webhook', {
      rawBody: JSON.stringify(event),
      apikey: null,
      headers: {
        'stripe-signature': sign(JSON.stringify(event), server.config.paymentWebhookSecret),
        'x-request-id': 'evt-delivery-1',
      },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toBe('evt-delivery-1');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    // The same security headers as every other platform answer.
    const health = await call(server, 'GET', '/api/health', { apikey: null });
    for (const name of [
      'x-content-type-options',
      'x-frame-options',
      'referrer-policy',
      'strict-transport-security',
    ])
      expect(res.headers.get(name)).toBe(health.headers.get(name));
  });

  test('a duplicate delivery is acknowledged and recorded once', async () => {
    const event = envelope('customer.updated', { id: 'cus_dup' });
    const body = JSON.stringify(event);
    expect((await post(body)).body.outcome).toBe('ignored');
    const again = await post(body);
    expect(again.status).toBe(200);
    expect(again.body.outcome).toBe('duplicate');
    const rows = await server.pool.query('select attempts from internal.billing_events where id = $1', [
      event.id,
    ]);
    expect(rows.rows).toEqual([{ attempts: 1 }]);
  });
});

describe('exactly-once processing', () => {
  const logger = createLogger('silent');
  const counting: HandlerRegistry = {
    'test.effect': async (tx, event) => {
      await tx.query('insert into public.test_effects values ($1, 1)', [event.id]);
      return 'processed';
    },
  };
  const effects = async (id: string) =>
    (await server.pool.query('select 1 from public.test_effects where event_id = $1', [id])).rowCount;

  test('the same event delivered 50 times concurrently has exactly one effect', async () => {
    const event = envelope('test.effect', { id: 'obj_race' });
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, () => receiveEvent(server.pool, counting, logger, event as never)),
    );
    expect(outcomes.filter((o) => o === 'processed')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'duplicate')).toHaveLength(49);
    expect(await effects(event.id)).toBe(1);
  });

  test('a failing handler leaves no effect, answers 500, is marked failed, and a retry applies it once', async () => {
    let fail = true;
    const flaky: HandlerRegistry = {
      'test.effect': async (tx, event) => {
        await tx.query('insert into public.test_effects values ($1, 1)', [event.id]);
        if (fail) throw new Error('downstream unavailable');
        return 'processed';
      },
    };
    const event = envelope('test.effect', { id: 'obj_flaky' });
    await expect(receiveEvent(server.pool, flaky, logger, event as never)).rejects.toMatchObject({
      status: 500,
    });
    expect(await effects(event.id)).toBe(0);
    const failed = await server.pool.query(
      'select status, last_error from internal.billing_events where id = $1',
      [event.id],
    );
    expect(failed.rows[0]).toMatchObject({ status: 'failed', last_error: 'downstream unavailable' });
    fail = false;
    expect(await receiveEvent(server.pool, flaky, logger, event as never)).toBe('processed');
    expect(await receiveEvent(server.pool, flaky, logger, event as never)).toBe('duplicate');
    expect(await effects(event.id)).toBe(1);
  });

  test('replay re-applies failed events in creation order', async () => {
    const seen: string[] = [];
    let fail = true;
    const handlers: HandlerRegistry = {
      'test.order': async (_tx, event) => {
        if (fail) throw new Error('not yet');
        seen.push(event.id);
        return 'processed';
      },
    };
    const later = envelope('test.order', {}, { created: 2_000_000_000 });
    const earlier = envelope('test.order', {}, { created: 1_900_000_000 });
    for (const e of [later, earlier]) {
      await expect(receiveEvent(server.pool, handlers, logger, e as never)).rejects.toBeTruthy();
    }
    fail = false;
    const result = await replayEvents(server.pool, handlers, logger, { ids: [later.id, earlier.id] });
    expect(result).toEqual({ replayed: 2, failed: 0 });
    expect(seen).toEqual([earlier.id, later.id]);
  });
});
