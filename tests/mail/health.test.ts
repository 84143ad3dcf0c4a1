// Readiness reports mail: how it is delivered, what waits and for how long, what failed; a backlog
// or a message given up on marks it degraded (SMTP delivery only), without taking the instance
// out of service.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { mailHealth, BACKLOG_WARNING_SECONDS } from '../../src/server/mail/health.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  // SMTP configured (nothing listens there; this server runs no delivery worker anyway).
  server = await startTestServer({ SMTP_URL: 'smtp://127.0.0.1:1' });
});
afterAll(async () => server?.close());

async function enqueue(id: string, ageSeconds: number, extra = '') {
  await server.pool.query(
    `insert into internal.outbox (kind, to_address, subject, text_body, message_id, created_at ${extra ? ', attempts, last_error, failed_at' : ''})
     values ('test', 'someone@example.com', 'Hello', 'Hi', $1, now() - make_interval(secs => $2) ${extra})`,
    [id, ageSeconds],
  );
}

test('an empty outbox is healthy; a backlog older than the warning is degraded; outbox-only is never judged', async () => {
  await server.pool.query('delete from internal.outbox');
  expect(await mailHealth(server.pool, 'smtp')).toMatchObject({ unsent: 0, degraded: false });

  await enqueue('<fresh@test>', 5);
  expect(await mailHealth(server.pool, 'smtp')).toMatchObject({ unsent: 1, degraded: false });

  await enqueue('<old@test>', BACKLOG_WARNING_SECONDS + 60);
  const backedUp = await mailHealth(server.pool, 'smtp');
  expect(backedUp).toMatchObject({ unsent: 2, degraded: true });
  expect(backedUp.oldest_unsent_seconds).toBeGreaterThan(BACKLOG_WARNING_SECONDS);
  expect(await mailHealth(server.pool, 'outbox')).toMatchObject({ unsent: 2, degraded: false });

  const ready = await fetch(`${server.url}/api/health/ready`);
  expect(ready.status).toBe(200);
  expect(await ready.json()).toMatchObject({
    status: 'ready',
    mail: { delivery: 'smtp', unsent: 2, degraded: true },
  });
});

test('a message given up on is degraded, and the latest error of a retrying one is shown', async () => {
  await server.pool.query('delete from internal.outbox');
  await enqueue('<gave-up@test>', 30, `, 5, 'connection refused', now()`);
  await server.pool.query(
    `insert into internal.outbox (kind, to_address, subject, text_body, message_id, attempts, last_error)
     values ('test', 'a@example.com', 'Hi', 'Hi', '<retry@test>', 1, '421 try later')`,
  );
  expect(await mailHealth(server.pool, 'smtp')).toMatchObject({
    unsent: 1,
    retrying: 1,
    failed_last_day: 1,
    last_error: '421 try later',
    degraded: true,
  });
});
