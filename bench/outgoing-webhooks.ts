// Outgoing webhooks benchmark: what subscribing costs the people writing (single-row project
// inserts per second, as a member under RLS, in a workspace with a subscribed endpoint beside one
// without), and how fast the deliverer empties a backlog to a local receiver beside a bare
// deliverer (claim a batch with SKIP LOCKED, sign, POST on kept-alive connections, mark the
// batch delivered in one statement) doing the least any outbox deliverer must.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPool, type Pool } from '../src/server/db/pool.js';
import { withRls, withService, type Claims } from '../src/server/db/transactions.js';
import { createLogger } from '../src/server/logger.js';
import { WebhookDelivery } from '../src/server/webhooks/delivery.js';
import type { BenchDatabase } from './support/database.js';
import { row, type BenchRow } from './support/report.js';

const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const BACKLOG = Math.max(200, Math.round(1800 * Number(process.env.BENCH_SCALE ?? 1)));
/** messages claimed and sent at once, by ours (its default batch) and by the bare deliverer */
const BATCH = 20;
const INSERTS_PER_ROUND = 900;

/** A receiver that answers every POST 204 once it has read the body, and counts them. */
async function startReceiver(): Promise<{ url: string; received: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received: () => count,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function owner(pool: Pool, label: string): Promise<{ claims: Claims; workspaceId: string }> {
  const email = `hooks-${randomUUID().slice(0, 8)}@example.com`;
  const id = await withService(pool, async (tx) => {
    const r = await tx.query<{ id: string }>(
      `insert into auth.users (email, email_confirmed_at) values ($1, now()) returning id`,
      [email],
    );
    return r.rows[0]!.id;
  });
  const claims: Claims = { role: 'authenticated', sub: id, email };
  const workspaceId = await withRls(pool, claims, async (tx) => {
    const r = await tx.query<{ id: string }>('select (public.create_workspace($1)).id as id', [label]);
    return r.rows[0]!.id;
  });
  return { claims, workspaceId };
}

/**
 * Single-row inserts per second into public.projects as the owner of a new workspace, one
 * transaction each, for DURATION_MS or up to INSERTS_PER_ROUND (the free plan holds 1,000 projects,
 * and the plan check counts them, so both sides stop at the same count).
 */
async function insertsPerSecond(pool: Pool, target: Awaited<ReturnType<typeof owner>>): Promise<number> {
  const { claims, workspaceId } = target;
  const until = performance.now() + DURATION_MS;
  const started = performance.now();
  let done = 0;
  while (performance.now() < until && done < INSERTS_PER_ROUND) {
    await withRls(pool, claims, (tx) =>
      tx.query('insert into public.projects (workspace_id, name) values ($1, $2)', [
        workspaceId,
        `Project ${done}`,
      ]),
    );
    done++;
  }
  return done / ((performance.now() - started) / 1000);
}

/** The bare deliverer: a plain queue table, the same batches, a kept-alive connection. */
async function bareDelivery(pool: Pool, target: string): Promise<number> {
  await pool.query(
    `create table if not exists public.bench_bare_hooks (
       id bigserial primary key, webhook_id text not null, payload jsonb not null,
       status text not null default 'pending', attempts int not null default 0)`,
  );
  await pool.query(
    `insert into public.bench_bare_hooks (webhook_id, payload)
     select 'msg_' || g, jsonb_build_object('type', 'project.created', 'data', jsonb_build_object('n', g))
     from generate_series(1, $1) g`,
    [BACKLOG],
  );
  const key = randomBytes(24);
  const agent = new http.Agent({ keepAlive: true, maxSockets: BATCH });
  const post = (body: string, id: string) =>
    new Promise<number>((resolve, reject) => {
      const timestamp = Math.floor(Date.now() / 1000).toString();
      const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
      const req = http.request(
        target,
        {
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'webhook-id': id,
            'webhook-timestamp': timestamp,
            'webhook-signature': `v1,${signature}`,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const started = performance.now();
  for (;;) {
    const batch = await pool.query<{ id: string; webhook_id: string; payload: unknown }>(
      `update public.bench_bare_hooks h set attempts = h.attempts + 1
       where h.id in (select id from public.bench_bare_hooks where status = 'pending'
                      order by id limit $1 for update skip locked)
       returning h.id, h.webhook_id, h.payload`,
      [BATCH],
    );
    if (batch.rows.length === 0) break;
    const statuses = await Promise.all(batch.rows.map((m) => post(JSON.stringify(m.payload), m.webhook_id)));
    await pool.query(`update public.bench_bare_hooks set status = 'delivered' where id = any($1)`, [
      batch.rows.filter((_, i) => statuses[i]! < 300).map((m) => m.id),
    ]);
  }
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  await pool.query('drop table public.bench_bare_hooks');
  return BACKLOG / seconds;
}

export async function outgoingWebhookBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  const pool = createPool(database.url, { max: BATCH + 2 });
  const receiver = await startReceiver();
  try {
    // The receiver is on this machine: allowed, as WEBHOOKS_ALLOWED_HOSTS=127.0.0.1 would.
    await pool.query(`update internal.webhook_settings set allowed_hosts = array['127.0.0.1']`);
    const subscribedWorkspace = async () => {
      const target = await owner(pool, 'Hooks Subscribed');
      await withRls(pool, target.claims, (tx) =>
        tx.query('select public.create_webhook_endpoint($1, $2, $3)', [
          target.workspaceId,
          receiver.url,
          ['project.created'],
        ]),
      );
      return target;
    };
    // Alternating rounds, so a drift of the machine's speed falls on both sides alike.
    const without: number[] = [];
    const withEndpoint: number[] = [];
    for (let round = 0; round < 2; round++) {
      without.push(await insertsPerSecond(pool, await owner(pool, 'Hooks Quiet')));
      withEndpoint.push(await insertsPerSecond(pool, await subscribedWorkspace()));
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

    // The backlog: the inserts above queued one message each; keep exactly BACKLOG of them.
    await pool.query(
      `delete from internal.webhook_messages where id not in (
         select id from internal.webhook_messages order by id limit $1)`,
      [BACKLOG],
    );
    const queued = Number(
      (
        await pool.query<{ n: string }>(
          `select count(*) as n from internal.webhook_messages where status = 'pending'`,
        )
      ).rows[0]!.n,
    );
    const delivery = new WebhookDelivery({
      pool,
      logger: createLogger('silent'),
      policy: { allowPrivate: false, allowedHosts: ['127.0.0.1'] },
      retrySchedule: [60],
      timeoutMs: 5000,
      disableAfterFailedMessages: 1000,
      disableAfterDays: 5,
      appUrl: 'http://app.example.test',
      batchSize: BATCH,
    });
    const before = receiver.received();
    const started = performance.now();
    const report = await delivery.drain();
    const ours = report.delivered / ((performance.now() - started) / 1000);
    const receivedOurs = receiver.received() - before;
    const bare = await bareDelivery(pool, receiver.url);

    return [
      row(
        {
          suite: 'webhooks',
          measure: 'project inserts with a subscribed endpoint (queued in the same transaction)',
          value: mean(withEndpoint),
          reference: mean(without),
          referenceName: 'the same inserts in a workspace with no endpoint',
          unit: 'inserts/s',
          note: `${(1000 / mean(withEndpoint)).toFixed(2)} ms vs ${(1000 / mean(without)).toFixed(2)} ms per insert`,
        },
        { minRatio: 0.8 },
      ),
      row(
        {
          suite: 'webhooks',
          measure: `deliveries of a ${queued}-message backlog (sign, POST, attempt log, lease)`,
          value: ours,
          reference: bare,
          referenceName:
            'bare deliverer: SKIP LOCKED batch, sign, POST on kept-alive connections, one mark per batch',
          unit: 'messages/s',
          note: `${report.delivered} of ${queued} delivered, ${receivedOurs} received, ${report.retried + report.failed} not`,
        },
        {
          minRatio: 0.5,
          also: [['every message delivered once', report.delivered === queued && receivedOurs === queued]],
        },
      ),
    ];
  } finally {
    await receiver.close();
    await pool.end();
  }
}
