// Plan limits enforced by the database for direct client writes: seats (members plus pending
// invitations) and projects, paid-plan limits while the subscription is good, free-plan limits
// after cancellation (nothing deleted), and read-only domain data after the payment grace period.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { syncEntitlements } from '../../src/server/billing/entitlements.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { signUp, type SignedIn } from '../support/workspaces.js';

let server: TestServer;
let owner: SignedIn;
let ws: string;

beforeAll(async () => {
  server = await startTestServer();
  await syncEntitlements(server.pool, {
    freeSeats: 3,
    freeProjects: 2,
    graceDays: 7,
    plans: [{ id: 'pro', name: 'Pro', priceId: 'price_pro', seats: 5, projects: 4 }],
  });
  owner = await signUp(server, 'limits');
  const { data } = await owner.client.rpc('create_workspace', { name: 'Limited' });
  ws = (data as { id: string }).id;
});
afterAll(async () => server?.close());

const setSubscription = (plan: string, status: string, pastDueDays: number | null = null) =>
  server.pool.query(
    `update public.subscriptions set plan = $2, status = $3,
       past_due_since = case when $4::int is null then null else now() - make_interval(days => $4::int) end
     where workspace_id = $1`,
    [ws, plan, status, pastDueDays],
  );

const addProject = (name: string) => owner.client.from('projects').insert({ workspace_id: ws, name });
const invite = (email: string) =>
  owner.client.rpc('invite_member', { workspace_id: ws, email, role: 'member' });

test('free plan: seats and projects are capped with a 402 naming the limit', async () => {
  expect((await invite('one@example.com')).error).toBeNull();
  expect((await invite('two@example.com')).error).toBeNull();
  const third = await invite('three@example.com');
  expect(third.status).toBe(402);
  expect(third.error?.message).toContain('all 3 seats of the free plan');

  expect((await addProject('P1')).error).toBeNull();
  expect((await addProject('P2')).error).toBeNull();
  const over = await addProject('P3');
  expect(over.status).toBe(402);
  expect(over.error?.message).toContain("free plan's limit of 2 projects");
  const count = await server.pool.query(
    'select count(*)::int as n from public.projects where workspace_id = $1',
    [ws],
  );
  expect(count.rows[0].n).toBe(2);
});

test('an active paid plan raises the limits; a cancelled one falls back without deleting data', async () => {
  await setSubscription('pro', 'active');
  expect((await addProject('P3')).error).toBeNull();
  expect((await addProject('P4')).error).toBeNull();
  expect((await addProject('P5')).status).toBe(402);
  expect((await invite('three@example.com')).error).toBeNull();

  await setSubscription('pro', 'canceled');
  expect((await addProject('P5')).status).toBe(402);
  const kept = await owner.client.from('projects').select('name').eq('workspace_id', ws);
  expect(kept.data).toHaveLength(4);
});

test('past due within the grace period keeps access; beyond it domain data is read-only', async () => {
  await setSubscription('pro', 'past_due', 2);
  expect(
    (await owner.client.from('projects').update({ description: 'still fine' }).eq('name', 'P1')).error,
  ).toBeNull();

  await setSubscription('pro', 'past_due', 8);
  const update = await owner.client.from('projects').update({ description: 'blocked' }).eq('name', 'P1');
  expect(update.status).toBe(402);
  expect(update.error?.message).toContain('read-only');
  expect((await owner.client.from('projects').delete().eq('name', 'P2')).status).toBe(402);
  const read = await owner.client.from('projects').select('name').eq('workspace_id', ws);
  expect(read.data).toHaveLength(4);

  await setSubscription('pro', 'active');
  expect((await owner.client.from('projects').delete().eq('name', 'P2')).error).toBeNull();
});

test('the service role (the server itself) is not limited', async () => {
  await setSubscription('free', 'active');
  const inserted = await server.pool.query(
    `insert into public.projects (workspace_id, name) select $1, 'bulk ' || g from generate_series(1, 5) g`,
    [ws],
  );
  expect(inserted.rowCount).toBe(5);
});
