// Digest benchmarks: composing and enqueueing digests for 10k and 100k eligible users (the
// 100k/10k time ratio shows whether cost grows linearly: ideal 10), and outbox delivery over SMTP
// beside a bare nodemailer send loop to the same local SMTP server.
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import { runDigest } from '../src/server/digest/run.js';
import { createUnsubscribeKey } from '../src/server/digest/unsubscribe-token.js';
import { createLogger } from '../src/server/logger.js';
import { MailDelivery } from '../src/server/mail/delivery.js';
import { enqueueMail } from '../src/server/mail/outbox.js';
import type { BenchDatabase } from './support/database.js';
import { row, type BenchRow } from './support/report.js';

const SMALL = Number(process.env.BENCH_DIGEST_SMALL ?? 10_000);
const LARGE = Number(process.env.BENCH_DIGEST_LARGE ?? 100_000);
const MESSAGES = Number(process.env.BENCH_MAIL_MESSAGES ?? 2000);

/** Users 1..n on daily digests, ten per workspace, each workspace with five changes by its author. */
async function population(pool: pg.Pool, from: number, to: number): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('set session_replication_role = replica'); // bulk load: no triggers
    const uid = (expr: string) => `('20000000-0000-4000-8000-' || lpad(to_hex(${expr}), 12, '0'))::uuid`;
    const wid = (expr: string) => `('30000000-0000-4000-8000-' || lpad(to_hex(${expr}), 12, '0'))::uuid`;
    await client.query(
      `insert into auth.users (id, email, email_confirmed_at)
       select ${uid('g')}, 'digest' || g || '@example.com', now() from generate_series($1::int, $2::int) g`,
      [from, to],
    );
    await client.query(
      `insert into public.profiles (id, email, display_name)
       select ${uid('g')}, 'digest' || g || '@example.com', 'User ' || g from generate_series($1::int, $2::int) g`,
      [from, to],
    );
    await client.query(
      `insert into public.notification_preferences (user_id, digest_frequency)
       select ${uid('g')}, 'daily' from generate_series($1::int, $2::int) g`,
      [from, to],
    );
    await client.query(
      `insert into public.workspaces (id, name, slug)
       select ${wid('w')}, 'Team ' || w, 'digest-team-' || w
       from generate_series(($1::int + 9) / 10, $2::int / 10) w`,
      [from, to],
    );
    await client.query(
      `insert into public.workspace_members (workspace_id, user_id, role)
       select ${wid('(g + 9) / 10')}, ${uid('g')}, 'member' from generate_series($1::int, $2::int) g`,
      [from, to],
    );
    // the author of each workspace's activity is its first member
    await client.query(
      `insert into public.activity_events (workspace_id, actor_id, action, subject, created_at)
       select ${wid('w')}, ${uid('w * 10 - 9')}, (array['project.created','project.updated','member.added'])[1 + e % 3],
              'Item ' || e, now() - (e || ' minutes')::interval
       from generate_series(($1::int + 9) / 10, $2::int / 10) w, generate_series(1, 5) e`,
      [from, to],
    );
    await client.query('set session_replication_role = origin');
    await client.query('analyze');
  } finally {
    client.release();
  }
}

async function timeRun(pool: pg.Pool): Promise<{ seconds: number; sent: number }> {
  await pool.query('delete from internal.digest_ledger');
  await pool.query(`delete from internal.outbox where kind = 'digest'`);
  const deps = {
    pool: pool as never,
    appUrl: 'http://localhost:3000',
    unsubscribeKey: createUnsubscribeKey('b'.repeat(40)),
  };
  const t0 = performance.now();
  const result = await runDigest(deps, 'daily', { batchSize: 1000 });
  return { seconds: (performance.now() - t0) / 1000, sent: result.sent };
}

async function deliveryRate(pool: pg.Pool): Promise<BenchRow> {
  let received = 0;
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        received++;
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const url = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
  const message = (i: number) => ({
    to: `reader${i}@example.com`,
    subject: `Digest ${i}`,
    text: 'Here is what happened today.\n'.repeat(20),
    html: '<p>Here is what happened today.</p>'.repeat(20),
  });
  try {
    await pool.query('delete from internal.outbox');
    for (let i = 0; i < MESSAGES; i++) await enqueueMail(pool as never, { kind: 'bench', ...message(i) });
    const delivery = new MailDelivery({
      pool: pool as never,
      logger: createLogger('silent'),
      smtp: url,
      from: 'bench@example.com',
    });
    const t0 = performance.now();
    await delivery.drain();
    const outboxSeconds = (performance.now() - t0) / 1000;
    await delivery.stop();

    // Reference: the same messages through a pooled nodemailer transport, 50 at a time, no database.
    const transport = nodemailer.createTransport(url, { pool: true, maxConnections: 5 } as object);
    const t1 = performance.now();
    for (let i = 0; i < MESSAGES; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, MESSAGES - i) }, (_, k) =>
          transport.sendMail({ from: 'bench@example.com', ...message(i + k) }),
        ),
      );
    }
    const bareSeconds = (performance.now() - t1) / 1000;
    transport.close();
    return row({
      suite: 'mail',
      measure: `outbox delivery over SMTP (${MESSAGES} messages)`,
      value: MESSAGES / outboxSeconds,
      reference: MESSAGES / bareSeconds,
      referenceName: 'bare pooled nodemailer send loop',
      unit: 'msg/s',
      note: `SMTP server received ${received} of ${2 * MESSAGES}`,
    });
  } finally {
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  }
}

export async function digestBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  const pool = new pg.Pool({ connectionString: database.url, max: 8 });
  pool.on('error', () => undefined); // the database stops right after the run
  try {
    await population(pool, 1, SMALL);
    const small = await timeRun(pool);
    await population(pool, SMALL + 1, LARGE);
    const large = await timeRun(pool);
    const rows: BenchRow[] = [
      row({
        suite: 'digest',
        measure: `compose and enqueue, ${LARGE.toLocaleString('en')} vs ${SMALL.toLocaleString('en')} eligible users`,
        value: large.seconds,
        reference: small.seconds,
        referenceName: `${SMALL.toLocaleString('en')} users`,
        unit: 's',
        note: `ideal ratio ${(LARGE / SMALL).toFixed(0)} (linear); sent ${large.sent.toLocaleString('en')} and ${small.sent.toLocaleString('en')}; ${Math.round(large.sent / large.seconds)} digests/s`,
      }),
    ];
    rows.push(await deliveryRate(pool));
    return rows;
  } finally {
    await pool.end();
  }
}
