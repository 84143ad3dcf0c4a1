// GET /metrics as Prometheus scrapes it from the whole process: off unless METRICS_TOKEN is set,
// then only with the token; request counts and latency per route family and status, the pool,
// the outbox, payment webhooks, realtime's sockets, messages and refusals, and the process' own
// figures, in the text exposition format.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import WebSocket from 'ws';
import { createLogger } from '../../src/server/logger.js';
import { createMetrics } from '../../src/server/observability/metrics.js';
import { createPool } from '../../src/server/db/pool.js';
import { startApp, type AppProcess } from '../support/app-process.js';
import { createTestDatabase, randomKey } from '../support/server.js';

const TOKEN = randomKey('metrics_');
let app: AppProcess;

beforeAll(async () => {
  app = await startApp({ METRICS_TOKEN: TOKEN, SKIP_WEB: '1' });
}, 120_000);
afterAll(async () => app?.stop());

/** The value of one sample line (`name{labels} value`), or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-z_]+)(\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[3] ?? '').matchAll(/([a-z_]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[4]);
  }
  return undefined;
}

test('only a scraper with the token reads it', async () => {
  expect((await fetch(`${app.url}/metrics`)).status).toBe(401);
  const wrong = await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } });
  expect(wrong.status).toBe(401);
  expect(await wrong.text()).not.toContain('tenantry_');
});

test('requests are counted and timed by family and status; pool, outbox and process figures are there', async () => {
  for (let i = 0; i < 3; i++) expect((await fetch(`${app.url}/api/health`)).status).toBe(200);
  const refused = await fetch(`${app.url}/rest/v1/projects`);
  expect(refused.status).toBe(401);
  const res = await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  expect(
    sample(text, 'tenantry_http_requests_total', { family: 'health', method: 'GET', status: '200' }),
  ).toBeGreaterThanOrEqual(3);
  expect(sample(text, 'tenantry_http_requests_total', { family: 'rest', status: '401' })).toBe(1);
  expect(
    sample(text, 'tenantry_http_request_duration_seconds_count', { family: 'health', status_class: '2xx' }),
  ).toBeGreaterThanOrEqual(3);
  expect(sample(text, 'tenantry_db_pool_connections', { state: 'open' })).toBeGreaterThan(0);
  expect(sample(text, 'tenantry_db_pool_connections', { state: 'waiting' })).toBe(0);
  expect(sample(text, 'tenantry_mail_outbox_unsent')).toBe(0);
  expect(sample(text, 'tenantry_payment_webhook_failed_events')).toBe(0);
  expect(sample(text, 'tenantry_process_resident_memory_bytes')).toBeGreaterThan(0);
  // Paths are never labels: one family for every project id.
  expect(text).not.toContain('/rest/v1/projects');
});

test("realtime's sockets, channels, messages and refusals by reason are there", async () => {
  const url = `${app.url.replace('http', 'ws')}/realtime/v1/websocket?apikey=${app.env.PROJECT_API_KEY}&vsn=1.0.0`;
  const ws = new WebSocket(url);
  const replies: { ref: string; payload: { status: string } }[] = [];
  ws.on('message', (data: Buffer) => {
    const frame = JSON.parse(data.toString()) as { event: string; ref: string; payload: { status: string } };
    if (frame.event === 'phx_reply') replies.push(frame);
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const config = { broadcast: { self: true }, presence: { key: '', enabled: false }, private: false };
  ws.send(
    JSON.stringify({
      topic: 'realtime:room',
      event: 'phx_join',
      payload: { config },
      ref: '1',
      join_ref: '1',
    }),
  );
  ws.send(
    JSON.stringify({ topic: 'realtime:', event: 'phx_join', payload: { config }, ref: '2', join_ref: '2' }),
  );
  while (replies.length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(replies.map((r) => r.payload.status).sort()).toEqual(['error', 'ok']);
  const text = await (
    await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
  ).text();
  expect(sample(text, 'tenantry_realtime_sockets')).toBe(1);
  expect(sample(text, 'tenantry_realtime_channels')).toBe(1);
  expect(sample(text, 'tenantry_realtime_messages_in_total')).toBe(2);
  expect(sample(text, 'tenantry_realtime_messages_out_total')).toBe(2);
  expect(sample(text, 'tenantry_realtime_refusals_total', { reason: 'TopicNameRequired' })).toBe(1);
  expect(sample(text, 'tenantry_realtime_pending_broadcasts')).toBe(0);
  expect(sample(text, 'tenantry_realtime_changes_lag_seconds')).toBe(0);
  ws.terminate();
});

test('without METRICS_TOKEN the endpoint does not exist', async () => {
  const pool = createPool(await createTestDatabase());
  const metrics = createMetrics({ pool, token: undefined, logger: createLogger('silent') });
  const server = createServer((req, res) => void metrics.serve(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`, {
      headers: { authorization: 'Bearer anything-at-all' },
    });
    expect(res.status).toBe(404);
  } finally {
    server.close();
    await pool.end();
  }
});
