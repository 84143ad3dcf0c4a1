// Outgoing webhooks end to end: admins register endpoints through supabase-js, changes made through
// the data API are delivered signed to a real HTTP receiver that verifies them with the
// standardwebhooks package, failures are retried with growing gaps under one webhook-id, a delivery
// can be replayed, an endpoint that keeps failing is turned off and its admins are e-mailed, unsafe
// destinations are refused at registration and at delivery, a rolled-back change sends nothing, and
// members below admin see nothing.
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { createLogger } from '../../src/server/logger.js';
import { MailDelivery } from '../../src/server/mail/delivery.js';
import type { DestinationPolicy } from '../../src/server/webhooks/destination.js';
import { syncWebhookSettings, WebhookDelivery } from '../../src/server/webhooks/delivery.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';
import { startReceiver, type Receiver } from './receiver.js';

let server: TestServer;
let smtp: TestSmtp;
let receiver: Receiver;
let owner: SignedIn;
let admin: SignedIn;
let member: SignedIn;
let viewer: SignedIn;
let ws: string;

const logger = createLogger('silent');
const open: DestinationPolicy = { allowPrivate: true, allowedHosts: [] };
const strict: DestinationPolicy = { allowPrivate: false, allowedHosts: [] };

interface Endpoint {
  id: string;
  url: string;
  enabled: boolean;
  secret?: string;
  event_types: string[];
  disabled_reason: string | null;
}

interface Delivery {
  id: number;
  webhook_id: string;
  event_type: string;
  status: string;
  attempts: number;
  log: {
    status_code: number | null;
    error: string | null;
    manual: boolean;
    response_excerpt: string | null;
  }[];
}

function deliverer(
  overrides: Partial<ConstructorParameters<typeof WebhookDelivery>[0]> = {},
): WebhookDelivery {
  return new WebhookDelivery({
    pool: server.pool,
    logger,
    policy: open,
    retrySchedule: [0.3, 0.9, 2],
    timeoutMs: 2000,
    disableAfterFailedMessages: 50,
    disableAfterDays: 5,
    appUrl: 'http://app.example.test',
    ...overrides,
  });
}

async function createEndpoint(by: SignedIn, url: string, eventTypes: string[]): Promise<Endpoint> {
  const { data, error } = await by.client.rpc('create_webhook_endpoint', {
    workspace_id: ws,
    url,
    event_types: eventTypes,
    description: 'test receiver',
  });
  if (error) throw new Error(`create_webhook_endpoint failed: ${error.message}`);
  return data as Endpoint;
}

async function deliveries(endpointId: string): Promise<Delivery[]> {
  const { data, error } = await admin.client.rpc('list_webhook_deliveries', { endpoint_id: endpointId });
  if (error) throw new Error(error.message);
  return data as Delivery[];
}

/** Drains until `done` holds (retries come due over time). */
async function deliverUntil(
  d: WebhookDelivery,
  done: () => Promise<boolean>,
  limitMs = 15000,
): Promise<void> {
  const until = Date.now() + limitMs;
  for (;;) {
    await d.drain();
    if (await done()) return;
    if (Date.now() > until) throw new Error('deliveries did not settle in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  server = await startTestServer();
  smtp = await startTestSmtp();
  receiver = await startReceiver();
  owner = await signUp(server, 'hooks-owner');
  admin = await signUp(server, 'hooks-admin');
  member = await signUp(server, 'hooks-member');
  viewer = await signUp(server, 'hooks-viewer');
  ws = await workspace(server, owner, 'Hooks Co', [
    [admin, 'admin'],
    [member, 'member'],
    [viewer, 'viewer'],
  ]);
});
afterAll(async () => {
  await receiver?.close();
  await smtp?.close();
  await server?.close();
});
beforeEach(async () => {
  receiver.status = 200;
  receiver.received.length = 0;
  // Each test registers its own endpoints; those of earlier tests must not receive its events.
  await server.pool.query('delete from internal.webhook_endpoints where workspace_id = $1', [ws]);
  await syncWebhookSettings(server.pool, { allowPrivate: true, allowedHosts: [], requireHttps: false });
});

test('a project created through supabase-js reaches the receiver signed, verifiable with standardwebhooks', async () => {
  const endpoint = await createEndpoint(admin, receiver.url(), ['project.created']);
  expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  const { data: listed } = await admin.client.rpc('list_webhook_endpoints', { workspace_id: ws });
  expect(JSON.stringify(listed)).not.toContain(endpoint.secret!.slice(6));

  const { data: project, error } = await owner.client
    .from('projects')
    .insert({ workspace_id: ws, name: 'Launch' })
    .select()
    .single();
  expect(error).toBeNull();
  expect(await deliverer().drain()).toEqual({ delivered: 1, retried: 0, failed: 0 });

  expect(receiver.received).toHaveLength(1);
  const hook = receiver.received[0]!;
  const verified = new Webhook(endpoint.secret!).verify(
    hook.body,
    hook.headers as Record<string, string>,
  ) as {
    type: string;
    timestamp: string;
    data: { id: string; name: string; workspace_id: string };
  };
  expect(verified.type).toBe('project.created');
  expect(verified.data).toMatchObject({
    id: (project as { id: string }).id,
    name: 'Launch',
    workspace_id: ws,
  });
  expect(new Date(verified.timestamp).getTime()).toBeGreaterThan(Date.now() - 60_000);
  expect(hook.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
  expect(hook.headers['content-type']).toBe('application/json');
  // A wrong secret does not verify: the signature is really checked.
  expect(() =>
    new Webhook('whsec_' + Buffer.alloc(32, 1).toString('base64')).verify(
      hook.body,
      hook.headers as Record<string, string>,
    ),
  ).toThrow();
  // Not subscribed: an update sends nothing.
  await owner.client
    .from('projects')
    .update({ name: 'Launch 2' })
    .eq('id', (project as { id: string }).id);
  expect(await deliverer().drain()).toEqual({ delivered: 0, retried: 0, failed: 0 });

  const [log] = await deliveries(endpoint.id);
  expect(log).toMatchObject({ status: 'delivered', attempts: 1, event_type: 'project.created' });
  expect(log!.log[0]).toMatchObject({ status_code: 200, error: null, manual: false });
});

test('a failing receiver sees retries with growing gaps and one webhook-id; a replay sends it again', async () => {
  receiver.status = 503;
  const endpoint = await createEndpoint(admin, receiver.url(), ['project.created']);
  await owner.client.from('projects').insert({ workspace_id: ws, name: 'Flaky' });
  const d = deliverer();
  await deliverUntil(d, async () => (await deliveries(endpoint.id))[0]?.status === 'failed');

  expect(receiver.received).toHaveLength(4); // the first try and three retries
  const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']));
  expect(ids.size).toBe(1);
  const times = receiver.received.map((r) => r.at);
  const gaps = times.slice(1).map((t, i) => t - times[i]!);
  expect(gaps[0]!).toBeGreaterThanOrEqual(200);
  expect(gaps[1]!).toBeGreaterThan(gaps[0]!);
  expect(gaps[2]!).toBeGreaterThan(gaps[1]!);

  const [failed] = await deliveries(endpoint.id);
  expect(failed!.log).toHaveLength(4);
  expect(failed!.log.every((a) => a.status_code === 503)).toBe(true);
  // The receiver's answer is kept only as an excerpt.
  expect(failed!.log[0]!.response_excerpt!.length).toBeLessThanOrEqual(1024);

  receiver.status = 200;
  const { error } = await admin.client.rpc('replay_webhook_delivery', { delivery_id: failed!.id });
  expect(error).toBeNull();
  await d.drain();
  expect(receiver.received).toHaveLength(5);
  expect(receiver.received[4]!.headers['webhook-id']).toBe([...ids][0]);
  const [replayed] = await deliveries(endpoint.id);
  expect(replayed).toMatchObject({ status: 'delivered' });
  expect(replayed!.log[0]).toMatchObject({ status_code: 200, manual: true });

  // A viewer cannot replay it.
  const refused = await viewer.client.rpc('replay_webhook_delivery', { delivery_id: failed!.id });
  expect(refused.error).not.toBeNull();
});

test('a backlog to one receiver goes out over kept-alive connections, each message once', async () => {
  await createEndpoint(admin, receiver.url(), ['project.created']);
  const { error } = await owner.client
    .from('projects')
    .insert(Array.from({ length: 45 }, (_, i) => ({ workspace_id: ws, name: `Backlog ${i}` })));
  expect(error).toBeNull();
  const opened = receiver.connections;
  const d = deliverer();
  try {
    expect(await d.drain()).toEqual({ delivered: 45, retried: 0, failed: 0 });
  } finally {
    await d.stop();
  }
  expect(new Set(receiver.received.map((h) => h.headers['webhook-id'])).size).toBe(45);
  // Three batches of at most 20 at once: the second and third reuse the first's connections.
  expect(receiver.connections - opened).toBeLessThanOrEqual(20);
});

test('an answer with a NUL byte is logged without it, and the message is not sent again', async () => {
  const nul = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\u0000done'));
  });
  await new Promise<void>((resolve) => nul.listen(0, '127.0.0.1', resolve));
  try {
    const endpoint = await createEndpoint(
      admin,
      `http://127.0.0.1:${(nul.address() as AddressInfo).port}/hook`,
      ['project.created'],
    );
    await owner.client.from('projects').insert({ workspace_id: ws, name: 'Nul answer' });
    const d = deliverer();
    try {
      expect(await d.drain()).toEqual({ delivered: 1, retried: 0, failed: 0 });
    } finally {
      await d.stop();
    }
    const attempts = await server.pool.query<{ response_excerpt: string; status: string }>(
      `select a.response_excerpt, m.status from internal.webhook_attempts a
       join internal.webhook_messages m on m.id = a.message_id where m.endpoint_id = $1`,
      [endpoint.id],
    );
    expect(attempts.rows).toEqual([{ response_excerpt: 'okdone', status: 'delivered' }]);
  } finally {
    nul.closeAllConnections();
    await new Promise((resolve) => nul.close(resolve));
  }
});

test('a kept connection the receiver reset is not a failed attempt: it is sent again on a new one', async () => {
  // A receiver that answers the first request on a connection and resets it on the second, as
  // one closing idle connections at the moment a message is written to it would.
  const requestsOn = new WeakMap<object, number>();
  const connections: import('node:net').Socket[] = [];
  const resetting = createTcpServer((socket) => {
    connections.push(socket);
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      const seen = (requestsOn.get(socket) ?? 0) + (text.match(/^POST /gm)?.length ?? 0);
      requestsOn.set(socket, seen);
      if (seen >= 2) return void socket.resetAndDestroy();
      if (text.includes('\r\n\r\n')) {
        socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nok');
      }
    });
  });
  await new Promise<void>((resolve) => resetting.listen(0, '127.0.0.1', resolve));
  try {
    await createEndpoint(admin, `http://127.0.0.1:${(resetting.address() as AddressInfo).port}/hook`, [
      'project.created',
    ]);
    const d = deliverer();
    try {
      for (const name of ['First on the connection', 'Second, reset']) {
        await owner.client.from('projects').insert({ workspace_id: ws, name });
        expect(await d.drain()).toEqual({ delivered: 1, retried: 0, failed: 0 });
      }
    } finally {
      await d.stop();
    }
    // The second went out on a connection of its own after the reset.
    expect(connections).toHaveLength(2);
  } finally {
    for (const socket of connections) socket.destroy();
    await new Promise((resolve) => resetting.close(resolve));
  }
});

test('an endpoint that keeps failing is turned off, its admins are e-mailed, and turning it on resumes', async () => {
  receiver.status = 500;
  const endpoint = await createEndpoint(owner, receiver.url(), ['project.created', 'project.deleted']);
  const d = deliverer({ retrySchedule: [0.1], disableAfterFailedMessages: 2 });
  await owner.client.from('projects').insert([
    { workspace_id: ws, name: 'One' },
    { workspace_id: ws, name: 'Two' },
  ]);
  await deliverUntil(d, async () => (await deliveries(endpoint.id)).every((m) => m.status === 'failed'));

  const { data: listed } = await admin.client.rpc('list_webhook_endpoints', { workspace_id: ws });
  const off = (listed as Endpoint[]).find((e) => e.id === endpoint.id)!;
  expect(off.enabled).toBe(false);
  expect(off.disabled_reason).toMatch(/2 messages in a row/);
  const audit = await server.pool.query(
    `select actor_type from public.audit_events where action = 'webhook_endpoint.disabled' and target_id = $1`,
    [endpoint.id],
  );
  expect(audit.rows).toEqual([{ actor_type: 'system' }]);

  const mail = new MailDelivery({ pool: server.pool, logger, smtp: smtp.url, from: 'hooks@example.test' });
  await mail.drain();
  await mail.stop();
  const told = smtp.messages.filter((m) => /webhook endpoint of Hooks Co was turned off/.test(m.raw));
  expect(told.flatMap((m) => m.to).sort()).toEqual([admin.email, owner.email].sort());
  expect(told[0]!.raw).toContain('/w/');
  // In the product's e-mail layout, with a plain-text part beside it.
  expect(told[0]!.raw).toMatch(/Content-Type: text\/plain/i);
  expect(told[0]!.raw).toMatch(/Content-Type: text\/html/i);

  // While off, new events are not queued for it; once back on, events flow again.
  receiver.status = 200;
  receiver.received.length = 0;
  await owner.client.from('projects').insert({ workspace_id: ws, name: 'While off' });
  await d.drain();
  expect(receiver.received).toHaveLength(0);
  const { data: on, error } = await admin.client.rpc('update_webhook_endpoint', {
    endpoint_id: endpoint.id,
    enabled: true,
  });
  expect(error).toBeNull();
  expect(on).toMatchObject({ enabled: true, disabled_reason: null, consecutive_failures: 0 });
  await owner.client.from('projects').insert({ workspace_id: ws, name: 'Three' });
  await d.drain();
  expect(receiver.received.map((r) => (JSON.parse(r.body) as { data: { name: string } }).data.name)).toEqual([
    'Three',
  ]);
});

test('unsafe destinations are refused at registration unless the operator allows them', async () => {
  await syncWebhookSettings(server.pool, { allowPrivate: false, allowedHosts: [], requireHttps: false });
  for (const url of [
    'http://127.0.0.1:9/hook',
    'http://10.1.2.3/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]:8080/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://[fd00::1]/hook',
    'http://0.0.0.0/hook',
    'http://224.0.0.1/hook',
    'http://100.64.0.1/hook',
    'http://192.168.1.1/hook',
    'http://localhost:3000/hook',
    'ftp://example.com/hook',
    'http://user:pw@example.com/hook',
  ]) {
    const { error } = await admin.client.rpc('create_webhook_endpoint', {
      workspace_id: ws,
      url,
      event_types: ['project.created'],
    });
    expect(error, url).toMatchObject({ code: '22023' });
  }
  const count = await server.pool.query(
    'select count(*)::int as n from internal.webhook_endpoints where workspace_id = $1',
    [ws],
  );
  expect(count.rows[0]).toEqual({ n: 0 });
  // A public name is accepted (it is checked again on its address at every delivery).
  await expect(
    createEndpoint(admin, 'https://hooks.example.com/in', ['project.created']),
  ).resolves.toBeTruthy();
  await expect(createEndpoint(admin, 'http://93.184.216.34/in', ['project.created'])).resolves.toBeTruthy();
  await expect(
    createEndpoint(admin, 'http://[2606:4700::1111]/in', ['project.created']),
  ).resolves.toBeTruthy();
  await syncWebhookSettings(server.pool, { allowPrivate: false, allowedHosts: [], requireHttps: true });
  const { error } = await admin.client.rpc('create_webhook_endpoint', {
    workspace_id: ws,
    url: 'http://hooks.example.com/in',
    event_types: ['project.created'],
  });
  expect(error?.message).toMatch(/https/);
  // An allowlisted internal host is accepted.
  await syncWebhookSettings(server.pool, {
    allowPrivate: false,
    allowedHosts: ['10.1.2.3'],
    requireHttps: false,
  });
  await expect(createEndpoint(admin, 'http://10.1.2.3/hook', ['project.created'])).resolves.toBeTruthy();
});

test('at delivery, a destination resolving to a refused address is not connected to', async () => {
  // Registered while allowed (or through a name that later resolves elsewhere: DNS rebinding).
  const byName = await createEndpoint(admin, `http://localhost:${receiver.port}/hook`, ['project.created']);
  const byAddress = await createEndpoint(admin, receiver.url(), ['project.created']);
  await owner.client.from('projects').insert({ workspace_id: ws, name: 'Rebound' });
  await deliverer({ policy: strict }).drain();
  expect(receiver.received).toHaveLength(0);
  const [named] = await deliveries(byName.id);
  expect(named!.log[0]!.status_code).toBeNull();
  expect(named!.log[0]!.error).toMatch(/localhost resolves to (127\.0\.0\.1|::1)/);
  const [literal] = await deliveries(byAddress.id);
  expect(literal!.log[0]!.error).toMatch(/127\.0\.0\.1 is a loopback/);
  // The allowlist lets the one named host through.
  await server.pool.query(
    `update internal.webhook_messages set available_at = now() where workspace_id = $1`,
    [ws],
  );
  await deliverer({ policy: { allowPrivate: false, allowedHosts: ['127.0.0.1'] } }).drain();
  expect(receiver.received).toHaveLength(1);
});

test('a rolled-back change sends nothing', async () => {
  const endpoint = await createEndpoint(admin, receiver.url(), ['project.created']);
  // One statement, two rows, the second invalid: the whole insert is rolled back.
  const { error } = await owner.client.from('projects').insert([
    { workspace_id: ws, name: 'Good' },
    { workspace_id: ws, name: ' ' },
  ]);
  expect(error).not.toBeNull();
  const client = await server.pool.connect();
  try {
    await client.query('begin');
    await client.query(`insert into public.projects (workspace_id, name) values ($1, 'Rolled back')`, [ws]);
    const inside = await client.query(
      'select count(*)::int as n from internal.webhook_messages where endpoint_id = $1',
      [endpoint.id],
    );
    expect(inside.rows[0]).toEqual({ n: 1 }); // written with the change...
    await client.query('rollback'); // ...and gone with it
  } finally {
    client.release();
  }
  expect(await deliverer().drain()).toEqual({ delivered: 0, retried: 0, failed: 0 });
  expect(receiver.received).toHaveLength(0);
  expect(await deliveries(endpoint.id)).toEqual([]);
});

test('members below admin can neither read nor create endpoints, and nobody reads a secret', async () => {
  const endpoint = await createEndpoint(admin, receiver.url(), ['project.created']);
  for (const who of [viewer, member]) {
    const list = await who.client.rpc('list_webhook_endpoints', { workspace_id: ws });
    expect(list.error).toMatchObject({ code: 'PT404' });
    const create = await who.client.rpc('create_webhook_endpoint', {
      workspace_id: ws,
      url: receiver.url(),
      event_types: ['project.created'],
    });
    expect(create.error).toMatchObject({ code: 'PT404' });
    for (const fn of [
      'rotate_webhook_secret',
      'delete_webhook_endpoint',
      'send_test_webhook',
      'list_webhook_deliveries',
    ]) {
      const { error } = await who.client.rpc(fn, { endpoint_id: endpoint.id });
      expect(error, fn).toMatchObject({ code: 'PT404' });
    }
    const direct = await who.client
      .schema('internal' as 'public')
      .from('webhook_endpoints')
      .select('secret');
    expect(direct.error).not.toBeNull();
  }
  // Even with a grant mistake aside, the signed-in role has no privilege on the tables.
  const client = await server.pool.connect();
  try {
    await client.query('begin');
    await client.query(`set local role authenticated`);
    await expect(client.query('select secret from internal.webhook_endpoints')).rejects.toThrow(
      /permission denied/,
    );
    await client.query('rollback');
  } finally {
    client.release();
  }
  const count = await server.pool.query(
    'select count(*)::int as n from internal.webhook_endpoints where workspace_id = $1',
    [ws],
  );
  expect(count.rows[0]).toEqual({ n: 1 });
});

test('rotation, test events, edits and deletion: signed with the new secret and in the audit log', async () => {
  const endpoint = await createEndpoint(admin, receiver.url(), ['member.added']);
  const { data: rotated, error } = await admin.client.rpc('rotate_webhook_secret', {
    endpoint_id: endpoint.id,
  });
  expect(error).toBeNull();
  const secret = (rotated as Endpoint).secret!;
  expect(secret).not.toBe(endpoint.secret);
  expect((await admin.client.rpc('send_test_webhook', { endpoint_id: endpoint.id })).error).toBeNull();
  await deliverer().drain();
  expect(receiver.received).toHaveLength(1);
  const hook = receiver.received[0]!;
  const headers = hook.headers as Record<string, string>;
  expect((new Webhook(secret).verify(hook.body, headers) as { type: string }).type).toBe('webhook.test');
  expect(() => new Webhook(endpoint.secret!).verify(hook.body, headers)).toThrow();

  const bad = await admin.client.rpc('update_webhook_endpoint', {
    endpoint_id: endpoint.id,
    event_types: ['nope'],
  });
  expect(bad.error).toMatchObject({ code: '22023' });
  const changed = await admin.client.rpc('update_webhook_endpoint', {
    endpoint_id: endpoint.id,
    event_types: ['member.added', 'member.role_changed'],
  });
  expect(changed.data).toMatchObject({ event_types: ['member.added', 'member.role_changed'] });
  expect((await admin.client.rpc('delete_webhook_endpoint', { endpoint_id: endpoint.id })).error).toBeNull();
  const audit = await server.pool.query<{ action: string; actor_id: string }>(
    `select action, actor_id from public.audit_events where target_type = 'webhook_endpoint' and target_id = $1 order by id`,
    [endpoint.id],
  );
  expect(audit.rows.map((r) => r.action)).toEqual([
    'webhook_endpoint.created',
    'webhook_endpoint.secret_rotated',
    'webhook_endpoint.updated',
    'webhook_endpoint.deleted',
  ]);
  expect(new Set(audit.rows.map((r) => r.actor_id))).toEqual(new Set([admin.id]));
});

test('an application table sends its own events through tenantry.emit_webhook', async () => {
  await server.pool.query(`
    create table if not exists public.hook_invoices (
      id uuid primary key default gen_random_uuid(),
      workspace_id uuid not null references public.workspaces (id) on delete cascade,
      amount integer not null);
    alter table public.hook_invoices enable row level security;
    drop policy if exists members_insert on public.hook_invoices;
    create policy members_insert on public.hook_invoices for insert to authenticated
      with check (workspace_id = any (tenantry.workspace_ids('member')));
    grant insert on public.hook_invoices to authenticated;
    create or replace function public.hook_invoices_emit() returns trigger language plpgsql as $$
    begin
      perform tenantry.emit_webhook(new.workspace_id, 'invoice.created', jsonb_build_object('id', new.id, 'amount', new.amount));
      return null;
    end $$;
    drop trigger if exists hook_invoices_emit on public.hook_invoices;
    create trigger hook_invoices_emit after insert on public.hook_invoices for each row execute function public.hook_invoices_emit();
    notify pgrst, 'reload schema';`);
  await new Promise((r) => setTimeout(r, 500));
  const endpoint = await createEndpoint(admin, receiver.url(), ['invoice.created']);
  const { error } = await member.client.from('hook_invoices').insert({ workspace_id: ws, amount: 4200 });
  expect(error).toBeNull();
  await deliverer().drain();
  expect(receiver.received).toHaveLength(1);
  const hook = receiver.received[0]!;
  const verified = new Webhook(endpoint.secret!).verify(hook.body, hook.headers as Record<string, string>);
  expect(verified).toMatchObject({ type: 'invoice.created', data: { amount: 4200 } });
  // The platform's own names are not the application's to send.
  const forged = await server.pool
    .query(`select tenantry.emit_webhook($1, 'project.created', '{}') as n`, [ws])
    .catch((e: Error) => e);
  expect(forged).toBeInstanceOf(Error);
});

test('an endpoint failing for days without a success is turned off even before N messages give up', async () => {
  receiver.status = 500;
  const endpoint = await createEndpoint(admin, receiver.url(), ['project.created']);
  await server.pool.query(
    `update internal.webhook_endpoints set failing_since = now() - interval '6 days' where id = $1`,
    [endpoint.id],
  );
  await owner.client.from('projects').insert({ workspace_id: ws, name: 'Still failing' });
  expect(await deliverer().drain()).toEqual({ delivered: 0, retried: 1, failed: 0 });
  const { data } = await admin.client.rpc('list_webhook_endpoints', { workspace_id: ws });
  const off = (data as Endpoint[]).find((e) => e.id === endpoint.id)!;
  expect(off).toMatchObject({ enabled: false, disabled_reason: 'deliveries have failed for 6 days' });
});

test('a receiver that does not answer in time fails the attempt, and a redirect is never followed', async () => {
  // Accepts the connection and never answers.
  const silent = createTcpServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const redirecting = createServer((req, res) => {
    req.resume();
    res.writeHead(307, { location: receiver.url('/moved') }).end();
  });
  await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
  try {
    const slow = await createEndpoint(
      admin,
      `http://127.0.0.1:${(silent.address() as AddressInfo).port}/hook`,
      ['project.created'],
    );
    const moved = await createEndpoint(
      admin,
      `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/hook`,
      ['project.created'],
    );
    await owner.client.from('projects').insert({ workspace_id: ws, name: 'Timed' });
    const started = Date.now();
    expect(await deliverer({ timeoutMs: 400, retrySchedule: [60] }).drain()).toEqual({
      delivered: 0,
      retried: 2,
      failed: 0,
    });
    expect(Date.now() - started).toBeLessThan(3000);
    const [timedOut] = await deliveries(slow.id);
    expect(timedOut!.log[0]).toMatchObject({ status_code: null });
    expect(timedOut!.log[0]!.error).toMatch(/timed out after 400 ms/);
    const [redirected] = await deliveries(moved.id);
    expect(redirected!.log[0]).toMatchObject({ status_code: 307 });
    expect(redirected!.log[0]!.error).toMatch(/not followed/);
    expect(receiver.received).toHaveLength(0);
  } finally {
    silent.close();
    redirecting.closeAllConnections();
    redirecting.close();
  }
});

test('two instances delivering at once send each message once', async () => {
  await createEndpoint(admin, receiver.url(), ['project.created']);
  await owner.client
    .from('projects')
    .insert(Array.from({ length: 12 }, (_, i) => ({ workspace_id: ws, name: `Parallel ${i}` })));
  const [a, b] = await Promise.all([
    deliverer({ batchSize: 3 }).drain(),
    deliverer({ batchSize: 3 }).drain(),
  ]);
  expect(a.delivered + b.delivered).toBe(12);
  expect(receiver.received).toHaveLength(12);
  expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(12);
});

test('members, invitations and billing changes are sent as their catalogue events', async () => {
  const endpoint = await createEndpoint(admin, receiver.url(), [
    'member.added',
    'member.role_changed',
    'member.removed',
    'invitation.created',
    'invitation.revoked',
    'billing.subscription_updated',
  ]);
  const newcomer = await signUp(server, 'hooks-newcomer');
  await server.pool.query(
    `insert into public.workspace_members (workspace_id, user_id, role) values ($1, $2, 'member')`,
    [ws, newcomer.id],
  );
  expect(
    (
      await owner.client
        .from('workspace_members')
        .update({ role: 'admin' })
        .match({ workspace_id: ws, user_id: newcomer.id })
    ).error,
  ).toBeNull();
  await server.pool.query(`delete from public.workspace_members where workspace_id = $1 and user_id = $2`, [
    ws,
    newcomer.id,
  ]);
  const invited = await admin.client.rpc('invite_member', {
    workspace_id: ws,
    email: 'later@example.com',
    role: 'member',
  });
  expect(invited.error).toBeNull();
  const invitationId = (invited.data as { invitation_id: string }).invitation_id;
  expect((await admin.client.rpc('revoke_invitation', { invitation_id: invitationId })).error).toBeNull();
  await server.pool.query(
    `insert into public.subscriptions (workspace_id) values ($1) on conflict (workspace_id) do nothing`,
    [ws],
  );
  await server.pool.query(`update public.subscriptions set status = 'past_due' where workspace_id = $1`, [
    ws,
  ]);

  await deliverer().drain();
  const secret = (
    await server.pool.query<{ secret: string }>(
      'select secret from internal.webhook_endpoints where id = $1',
      [endpoint.id],
    )
  ).rows[0]!.secret;
  const events = receiver.received
    .map(
      (r) =>
        new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as {
          type: string;
          data: Record<string, unknown>;
        },
    )
    .sort((a, b) => a.type.localeCompare(b.type));
  expect(events.map((e) => e.type)).toEqual([
    'billing.subscription_updated',
    'invitation.created',
    'invitation.revoked',
    'member.added',
    'member.removed',
    'member.role_changed',
  ]);
  expect(events.find((e) => e.type === 'member.role_changed')!.data).toMatchObject({
    user_id: newcomer.id,
    from: 'member',
    to: 'admin',
  });
  expect(events.find((e) => e.type === 'invitation.created')!.data).toMatchObject({
    id: invitationId,
    email: 'later@example.com',
  });
  expect(JSON.stringify(events)).not.toMatch(/token/i);
  expect(events.find((e) => e.type === 'billing.subscription_updated')!.data).toMatchObject({
    status: 'past_due',
  });
});

test('finished deliveries older than the retention are deleted, waiting ones kept', async () => {
  const endpoint = await createEndpoint(admin, receiver.url(), ['project.created']);
  await owner.client.from('projects').insert([
    { workspace_id: ws, name: 'Old delivered' },
    { workspace_id: ws, name: 'Old waiting' },
  ]);
  const ids = (
    await server.pool.query<{ id: string }>(
      'select id from internal.webhook_messages where endpoint_id = $1 order by id',
      [endpoint.id],
    )
  ).rows.map((r) => r.id);
  await server.pool.query(
    `update internal.webhook_messages set created_at = now() - interval '40 days',
       status = case when id = $1 then 'delivered' else 'pending' end,
       available_at = now() + interval '1 hour'
     where endpoint_id = $2`,
    [ids[0], endpoint.id],
  );
  expect(await deliverer({ logRetentionDays: 30 }).purgeOld()).toBe(1);
  const left = await server.pool.query<{ id: string }>(
    'select id from internal.webhook_messages where endpoint_id = $1',
    [endpoint.id],
  );
  expect(left.rows.map((r) => r.id)).toEqual([ids[1]]);
});
