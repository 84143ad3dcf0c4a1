// The outbox and its SMTP delivery against a real SMTP server: delivered once, retried with
// backoff while SMTP refuses, nothing lost, never sent twice even with two workers racing.
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { createPool, type Pool } from '../../src/server/db/pool.js';
import { withService } from '../../src/server/db/transactions.js';
import { createLogger } from '../../src/server/logger.js';
import { MailDelivery } from '../../src/server/mail/delivery.js';
import { enqueueMail } from '../../src/server/mail/outbox.js';
import { createTestDatabase } from '../support/server.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let pool: Pool;
let smtp: TestSmtp;
const logger = createLogger('silent');

beforeAll(async () => {
  pool = createPool(await createTestDatabase(), { max: 10 });
  smtp = await startTestSmtp();
});
afterAll(async () => {
  await pool?.end();
  await smtp?.close();
});
beforeEach(async () => {
  smtp.messages.length = 0;
  smtp.refusing = false;
  await pool.query('delete from internal.outbox');
});

const worker = (extra: Partial<ConstructorParameters<typeof MailDelivery>[0]> = {}) =>
  new MailDelivery({ pool, logger, smtp: smtp.url, from: 'Tenantry <no-reply@example.com>', ...extra });

async function enqueue(n: number, prefix = 'm') {
  for (let i = 0; i < n; i++) {
    await enqueueMail(pool, {
      kind: 'test',
      to: `${prefix}${i}@example.com`,
      subject: `Hello ${i}`,
      text: `plain ${i}`,
      html: `<p>html ${i}</p>`,
      headers: { 'List-Unsubscribe': `<https://example.com/u/${i}>` },
    });
  }
}

test('a message written with its change is delivered once, with text, html and headers', async () => {
  await withService(pool, async (tx) => {
    await enqueueMail(tx, {
      kind: 'test',
      to: 'ada@example.com',
      subject: 'Welcome',
      text: 'Hi Ada',
      html: '<b>Hi</b>',
      headers: { 'X-Tenantry-Kind': 'test' },
    });
  });
  const delivery = worker();
  expect(await delivery.drain()).toEqual({ sent: 1, retried: 0, failed: 0 });
  expect(await delivery.drain()).toEqual({ sent: 0, retried: 0, failed: 0 });
  await delivery.stop();
  expect(smtp.messages).toHaveLength(1);
  const [mail] = smtp.messages;
  expect(mail!.to).toEqual(['ada@example.com']);
  expect(mail!.header('subject')).toBe('Welcome');
  expect(mail!.header('x-tenantry-kind')).toBe('test');
  expect(mail!.raw).toContain('Hi Ada');
  expect(mail!.raw).toContain('text/html');
  const row = await pool.query('select sent_at, attempts from internal.outbox');
  expect(row.rows[0].sent_at).not.toBeNull();
  expect(row.rows[0].attempts).toBe(1);
});

test('a rolled-back change leaves no e-mail behind', async () => {
  await expect(
    withService(pool, async (tx) => {
      await enqueueMail(tx, { kind: 'test', to: 'x@example.com', subject: 's', text: 't' });
      throw new Error('change failed');
    }),
  ).rejects.toThrow('change failed');
  expect((await pool.query('select 1 from internal.outbox')).rowCount).toBe(0);
});

test('a dedupe key makes a second enqueue a no-op', async () => {
  const first = await enqueueMail(pool, {
    kind: 'digest',
    to: 'a@example.com',
    subject: 's',
    text: 't',
    dedupeKey: 'k1',
  });
  const second = await enqueueMail(pool, {
    kind: 'digest',
    to: 'a@example.com',
    subject: 's',
    text: 't',
    dedupeKey: 'k1',
  });
  expect(first).not.toBeNull();
  expect(second).toBeNull();
});

test('SMTP refusing, then recovering: nothing lost, each delivered exactly once', async () => {
  await enqueue(5);
  smtp.refusing = true;
  const delivery = worker({ baseBackoffSeconds: 1 });
  const during = await delivery.deliverBatch();
  expect(during).toEqual({ sent: 0, retried: 5, failed: 0 });
  const pending = await pool.query(
    'select attempts, last_error, available_at > now() as later from internal.outbox',
  );
  expect(
    pending.rows.every((r) => r.attempts === 1 && r.later && /451|unavailable/i.test(r.last_error)),
  ).toBe(true);
  // Not due yet: nothing is attempted before the backoff passes.
  expect(await delivery.deliverBatch()).toEqual({ sent: 0, retried: 0, failed: 0 });
  smtp.refusing = false;
  await pool.query('update internal.outbox set available_at = now()');
  expect((await delivery.drain()).sent).toBe(5);
  await delivery.stop();
  expect(smtp.messages.map((m) => m.to[0]).sort()).toEqual(
    [0, 1, 2, 3, 4].map((i) => `m${i}@example.com`).sort(),
  );
});

test('a message is given up after the maximum attempts', async () => {
  await enqueue(1);
  smtp.refusing = true;
  const delivery = worker({ maxAttempts: 2, baseBackoffSeconds: 1 });
  expect((await delivery.deliverBatch()).retried).toBe(1);
  await pool.query('update internal.outbox set available_at = now()');
  expect((await delivery.deliverBatch()).failed).toBe(1);
  await delivery.stop();
  const row = await pool.query('select failed_at from internal.outbox');
  expect(row.rows[0].failed_at).not.toBeNull();
});

test('two workers racing over one outbox send every message exactly once', async () => {
  await enqueue(120, 'race');
  const a = worker({ batchSize: 7 });
  const b = worker({ batchSize: 11 });
  await Promise.all([a.drain(), b.drain(), a.drain(), b.drain()]);
  await Promise.all([a.stop(), b.stop()]);
  const recipients = smtp.messages.map((m) => m.to[0]);
  expect(recipients).toHaveLength(120);
  expect(new Set(recipients).size).toBe(120);
  const unsent = await pool.query('select 1 from internal.outbox where sent_at is null');
  expect(unsent.rowCount).toBe(0);
});

test("a crashed worker's lease expires and another worker delivers the message", async () => {
  await enqueue(1, 'lease');
  // Simulate a worker that claimed the message and died before sending.
  await pool.query(`update internal.outbox set leased_until = now() + interval '1 hour', attempts = 1`);
  const delivery = worker();
  expect((await delivery.deliverBatch()).sent).toBe(0);
  await pool.query(`update internal.outbox set leased_until = now() - interval '1 second'`);
  expect((await delivery.deliverBatch()).sent).toBe(1);
  await delivery.stop();
  expect(smtp.messages).toHaveLength(1);
});
