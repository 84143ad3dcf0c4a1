// Billing benchmark: webhook events per second through POST /api/billing/webhook (signature
// verification, event log, and the handler applying the change, one transaction each) beside a
// fair reference: a bare node:http + pg server that verifies the same signatures, inserts the
// event row and applies one update in one transaction (bench/webhook-reference-server.ts).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import Stripe from 'stripe';
import type { BenchDatabase } from './support/database.js';
import { compareLoads, request } from './support/load.js';
import { row, type BenchRow } from './support/report.js';
import { startBenchServer, stopBenchServer } from './support/servers.js';

const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const CONCURRENCY = 16;
const WORKSPACES = 200;

function subscriptionEvent(workspaceId: string, created: number) {
  return {
    id: `evt_${randomBytes(12).toString('hex')}`,
    object: 'event',
    api_version: '2026-10-28.endive',
    created,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: 'customer.subscription.updated',
    data: {
      object: {
        id: `sub_${workspaceId.slice(0, 8)}`,
        object: 'subscription',
        customer: `cus_${workspaceId.slice(0, 8)}`,
        status: 'active',
        cancel_at_period_end: false,
        metadata: { workspace_id: workspaceId },
        items: {
          object: 'list',
          data: [{ current_period_end: created + 2592000, price: { id: 'price_bench' } }],
        },
      },
    },
  };
}

export async function billingBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  const pool = new pg.Pool({ connectionString: database.url, max: 2 });
  pool.on('error', () => undefined);
  const created = await pool.query<{ id: string }>(
    `insert into public.workspaces (name, slug) select 'Billing ' || g, 'billing-bench-' || g from generate_series(1, $1) g returning id`,
    [WORKSPACES],
  );
  await pool.query(
    'insert into public.subscriptions (workspace_id) select unnest($1::uuid[]) on conflict do nothing',
    [created.rows.map((r) => r.id)],
  );
  const ids = created.rows.map((r) => r.id);
  await pool.end();

  const secret = `whsec_${randomBytes(24).toString('hex')}`;
  const apiKey = randomBytes(24).toString('hex');
  const env = { PAYMENT_WEBHOOK_SECRET: secret };
  const server = await startBenchServer('bench/identity-server.ts', database.url, apiKey, undefined, env);
  const reference = await startBenchServer(
    'bench/webhook-reference-server.ts',
    database.url,
    apiKey,
    undefined,
    env,
  );
  let counter = 0;
  const nextEvent = () => {
    const body = JSON.stringify(subscriptionEvent(ids[counter % ids.length]!, 1_800_000_000 + counter));
    counter++;
    return { body, signature: Stripe.webhooks.generateTestHeaderString({ payload: body, secret }) };
  };
  const deliver = (url: string) => async () => {
    const { body, signature } = nextEvent();
    const res = await request(
      url,
      'POST',
      { 'content-type': 'application/json', 'stripe-signature': signature },
      body,
    );
    return res.status === 200;
  };
  try {
    const { a: webhook, b: bare } = await compareLoads({
      durationMs: DURATION_MS * 2,
      concurrency: CONCURRENCY,
      a: deliver(`${server.url}/api/billing/webhook`),
      b: deliver(`${reference.url}/`),
    });
    return [
      row(
        {
          suite: 'billing',
          measure: 'webhook events applied (verify + log + apply)',
          value: webhook.perSecond,
          reference: bare.perSecond,
          referenceName: 'bare server: verify, insert event, one update, one transaction',
          unit: 'events/s',
          note: `p50 ${webhook.p50.toFixed(1)} ms vs ${bare.p50.toFixed(1)} ms, p99 ${webhook.p99.toFixed(1)} ms, errors ${webhook.errors}/${bare.errors}`,
        },
        { minRatio: 0.8, also: [['0 errors', webhook.errors + bare.errors === 0]] },
      ),
    ];
  } finally {
    await stopBenchServer(server.child);
    await stopBenchServer(reference.child);
  }
}
