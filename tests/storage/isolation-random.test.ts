// A randomized run of many users over several workspaces' files: every upload, download, list,
// remove and move is checked against a model of who may do what (viewers read, members write,
// outsiders nothing), so a single cross-tenant read or write, or a refused allowed one, fails it.
import type { SupabaseClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';
import { startStorageServer, type StorageTestServer } from './support.js';

type Role = 'owner' | 'member' | 'viewer' | null;

let server: StorageTestServer;
const users: SignedIn[] = [];
const workspaces: string[] = [];
/** roles[u][w]: user u's role in workspace w */
const roles: Role[][] = [];

/** A small seeded generator, so a failing run can be replayed. */
function generator(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

beforeAll(async () => {
  server = await startStorageServer();
  for (let u = 0; u < 6; u++) users.push(await signUp(server, `random-${u}`));
  // Workspace w is owned by user w; users 3-5 get a role (or none) in each.
  const plan: Role[][] = [
    ['owner', 'viewer', null, 'member', null, 'viewer'],
    [null, 'owner', 'member', 'viewer', 'member', null],
    ['viewer', null, 'owner', null, 'viewer', 'member'],
  ];
  for (let w = 0; w < 3; w++) {
    const members = plan[w]!.flatMap((role, u) =>
      role && role !== 'owner' ? [[users[u]!, role] as [SignedIn, 'member' | 'viewer']] : [],
    );
    workspaces.push(await workspace(server, users[w]!, `Random ${w}`, members));
  }
  for (let u = 0; u < 6; u++) roles.push(plan.map((row) => row[u]!));
}, 60_000);
afterAll(async () => server?.close());

const reads = (role: Role) => role !== null;
const writes = (role: Role) => role === 'owner' || role === 'member';

test('no cross-tenant read or write in 250 random operations, and no allowed one refused', async () => {
  const seed = Number(process.env.STORAGE_RANDOM_SEED ?? 20261127);
  const random = generator(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const model = new Map<string, string>();
  const files = (u: number) => (users[u]!.client as SupabaseClient).storage.from('workspace-files');

  for (let step = 0; step < 250; step++) {
    const u = Math.floor(random() * users.length);
    const w = Math.floor(random() * workspaces.length);
    const path = `${workspaces[w]}/${pick(['a.txt', 'b.txt', 'dir/c.txt'])}`;
    const role = roles[u]![w]!;
    const context = `seed ${seed}, step ${step}, user ${u} (${role ?? 'outsider'}) on workspace ${w}`;
    const op = pick(['upload', 'upload', 'download', 'list', 'remove', 'move'] as const);
    if (op === 'upload') {
      const content = `u${u}-s${step}`;
      const upsert = random() < 0.5;
      const { error } = await files(u).upload(path, new Blob([content]), { upsert });
      const ok = writes(role) && (upsert || !model.has(path));
      expect(error === null, `${context}: upload ${path}`).toBe(ok);
      if (ok) model.set(path, content);
    } else if (op === 'download') {
      const { data, error } = await files(u).download(path);
      const ok = reads(role) && model.has(path);
      expect(error === null, `${context}: download ${path}`).toBe(ok);
      if (ok) expect(await data!.text(), context).toBe(model.get(path));
    } else if (op === 'list') {
      const { data } = await files(u).listV2({ prefix: `${workspaces[w]}/` });
      const expected = reads(role)
        ? [...model.keys()].filter((k) => k.startsWith(`${workspaces[w]}/`)).sort()
        : [];
      expect(data!.objects.map((o) => o.name).sort(), `${context}: list`).toEqual(expected);
    } else if (op === 'remove') {
      const { data } = await files(u).remove([path]);
      const ok = writes(role) && model.has(path);
      expect(
        data!.map((o) => o.name),
        `${context}: remove ${path}`,
      ).toEqual(ok ? [path] : []);
      if (ok) model.delete(path);
    } else {
      const w2 = Math.floor(random() * workspaces.length);
      const to = `${workspaces[w2]}/${pick(['a.txt', 'b.txt', 'dir/c.txt'])}`;
      const { error } = await files(u).move(path, to);
      const ok = writes(role) && writes(roles[u]![w2]!) && model.has(path) && !model.has(to) && to !== path;
      expect(error === null, `${context}: move ${path} -> ${to}`).toBe(ok);
      if (ok) {
        model.set(to, model.get(path)!);
        model.delete(path);
      }
    }
  }
  // The database holds exactly what the model says, byte for byte.
  const { rows } = await server.pool.query<{ name: string }>(
    `select name from storage.objects where bucket_id = 'workspace-files' order by name`,
  );
  expect(rows.map((r) => r.name)).toEqual([...model.keys()].sort());
  for (const [path, content] of model) {
    expect(
      await (await server.adminClient().storage.from('workspace-files').download(path)).data?.text(),
    ).toBe(content);
  }
}, 120_000);
