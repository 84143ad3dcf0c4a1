// Randomised tenant isolation: users in several workspaces perform thousands of random reads and
// writes through supabase-js; an oracle kept outside the database says what each should see and
// be allowed to change. Any difference is a cross-tenant read or write, and fails the test.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { withService } from '../../src/server/db/transactions.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { signUp, type SignedIn } from '../support/workspaces.js';

const OPERATIONS = Number(process.env.ISOLATION_OPERATIONS ?? 2000);
const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;
type Role = (typeof ROLES)[number];

/** Deterministic PRNG (mulberry32) so a failure can be replayed with the same seed. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

test(`isolation holds over ${OPERATIONS} random operations`, async () => {
  const seed = Number(process.env.ISOLATION_SEED ?? 20261122);
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

  const users: SignedIn[] = [];
  for (let i = 0; i < 6; i++) users.push(await signUp(server, `iso${i}`));
  const workspaces: string[] = [];
  // Oracle: role of each user in each workspace, and the projects of each workspace.
  const roles = new Map<string, Map<string, Role>>(users.map((u) => [u.id, new Map()]));
  const projects = new Map<string, { workspace: string; name: string }>();

  for (let w = 0; w < 4; w++) {
    const founder = users[w % users.length]!;
    const { data } = await founder.client.rpc('create_workspace', { name: `Tenant ${w}` });
    const id = (data as { id: string }).id;
    workspaces.push(id);
    roles.get(founder.id)!.set(id, 'owner');
    for (const user of users) {
      if (user === founder || random() < 0.5) continue;
      const role = pick(ROLES.slice(0, 3));
      await withService(server.pool, (tx) =>
        tx.query('insert into public.workspace_members values ($1, $2, $3)', [id, user.id, role]),
      );
      roles.get(user.id)!.set(id, role);
    }
  }
  const canWrite = (user: SignedIn, ws: string) => {
    const role = roles.get(user.id)!.get(ws);
    return role !== undefined && role !== 'viewer';
  };
  const canRead = (user: SignedIn, ws: string) => roles.get(user.id)!.has(ws);

  let checked = 0;
  const violations: string[] = [];
  const expectThat = (ok: boolean, what: string) => {
    checked++;
    if (!ok) violations.push(what);
  };

  for (let i = 0; i < OPERATIONS; i++) {
    const user = pick(users);
    const op = random();
    if (op < 0.35) {
      const { data, error } = await user.client.from('projects').select('id, workspace_id, name');
      const expected = [...projects]
        .filter(([, p]) => canRead(user, p.workspace))
        .map(([id]) => id)
        .sort();
      const seen = (data ?? []).map((p) => p.id as string).sort();
      expectThat(
        !error && JSON.stringify(seen) === JSON.stringify(expected),
        `op ${i}: list by ${user.email}`,
      );
      for (const row of data ?? [])
        expectThat(canRead(user, row.workspace_id as string), `op ${i}: foreign row ${row.id}`);
    } else if (op < 0.6) {
      const ws = pick(workspaces);
      const name = `p${i}`;
      const { data, error } = await user.client
        .from('projects')
        .insert({ workspace_id: ws, name })
        .select('id')
        .maybeSingle();
      if (canWrite(user, ws)) {
        expectThat(!error && !!data, `op ${i}: insert allowed for ${user.email} in ${ws}`);
        if (data) projects.set(data.id as string, { workspace: ws, name });
      } else {
        expectThat(error?.code === '42501', `op ${i}: insert refused for ${user.email} in ${ws}`);
      }
    } else if (op < 0.75 && projects.size > 0) {
      const [id, project] = pick([...projects]);
      const name = `renamed${i}`;
      const { data, error } = await user.client.from('projects').update({ name }).eq('id', id).select('id');
      const allowed = canWrite(user, project.workspace);
      expectThat(
        !error && (data?.length ?? 0) === (allowed ? 1 : 0),
        `op ${i}: update of ${id} by ${user.email}`,
      );
      if (allowed) project.name = name;
    } else if (op < 0.85 && projects.size > 0) {
      const [id, project] = pick([...projects]);
      const { data, error } = await user.client.from('projects').delete().eq('id', id).select('id');
      const allowed = canWrite(user, project.workspace);
      expectThat(
        !error && (data?.length ?? 0) === (allowed ? 1 : 0),
        `op ${i}: delete of ${id} by ${user.email}`,
      );
      if (allowed) projects.delete(id);
    } else if (op < 0.93) {
      const ws = pick(workspaces);
      const { data, error } = await user.client
        .from('workspace_members')
        .select('user_id')
        .eq('workspace_id', ws);
      const expected = canRead(user, ws) ? users.filter((u) => roles.get(u.id)!.has(ws)).length : 0;
      expectThat(!error && data?.length === expected, `op ${i}: members of ${ws} for ${user.email}`);
    } else {
      const ws = pick(workspaces);
      const { data, error } = await user.client
        .from('activity_events')
        .select('workspace_id')
        .eq('workspace_id', ws)
        .limit(5);
      expectThat(
        !error && (canRead(user, ws) || data?.length === 0),
        `op ${i}: activity of ${ws} for ${user.email}`,
      );
    }
  }

  // Finally the database itself must match the oracle exactly: no write went astray.
  const stored = await server.pool.query<{ id: string; workspace_id: string; name: string }>(
    'select id, workspace_id, name from public.projects',
  );
  expectThat(stored.rowCount === projects.size, 'project count matches the oracle');
  for (const row of stored.rows) {
    const expected = projects.get(row.id);
    expectThat(expected?.workspace === row.workspace_id && expected?.name === row.name, `stored ${row.id}`);
  }
  console.log(
    `isolation: ${checked} checks over ${OPERATIONS} operations (seed ${seed}), ${violations.length} violations`,
  );
  expect(violations).toEqual([]);
}, 180_000);
