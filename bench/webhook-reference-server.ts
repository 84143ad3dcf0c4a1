// Benchmark reference for the payment webhook: the smallest honest server doing the same work.
// node:http + pg: read the body, verify the Stripe signature with the stripe SDK, then in ONE
// transaction (begin / insert / update / commit as separate round trips) record the event row and
// apply one update to the workspace's subscription. No exactly-once guard beyond the primary key,
// no ordering guard, no workspace lookup: anything the real webhook costs beyond this is the
// price of those guarantees and of its pipeline.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import Stripe from 'stripe';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const secret = process.env.PAYMENT_WEBHOOK_SECRET!;

interface Event {
  id: string;
  type: string;
  created: number;
  data: { object: { status: string; metadata: { workspace_id: string } } };
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    void (async () => {
      const body = Buffer.concat(chunks);
      let event: Event;
      try {
        event = Stripe.webhooks.constructEvent(
          body,
          String(req.headers['stripe-signature']),
          secret,
        ) as unknown as Event;
      } catch {
        res.writeHead(400);
        res.end();
        return;
      }
      const client = await pool.connect();
      try {
        await client.query('begin');
        await client.query(
          `insert into internal.billing_events (id, type, created, payload, status) values ($1, $2, $3, $4, 'processed')`,
          [event.id, event.type, event.created, body.toString('utf8')],
        );
        await client.query(
          `update public.subscriptions set status = $2, last_event_created = $3, updated_at = now() where workspace_id = $1`,
          [event.data.object.metadata.workspace_id, event.data.object.status, event.created],
        );
        await client.query('commit');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ received: true, id: event.id }));
      } catch {
        await client.query('rollback').catch(() => undefined);
        res.writeHead(500);
        res.end();
      } finally {
        client.release();
      }
    })();
  });
});
server.listen(0, '127.0.0.1', () =>
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`),
);
process.on('SIGTERM', () => {
  server.close();
  void pool.end().then(() => process.exit(0));
});
