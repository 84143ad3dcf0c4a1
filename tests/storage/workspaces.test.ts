// Workspace files: the workspace-files bucket, whose first folder is the workspace id. Members of a
// workspace read its files (viewers too) and members write; nobody else reaches them through any
// operation. Bytes count against the workspace plan's storage limit, checked on upload while the
// bytes stream; deleting the workspace deletes its files, rows and bytes.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { SupabaseClient } from '@supabase/supabase-js';
import { syncPlanStorageLimits } from '../../src/server/storage/plan-bytes.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';
import { startStorageServer, storageFetch, type StorageTestServer } from './support.js';

let server: StorageTestServer;
let owner: SignedIn;
let viewer: SignedIn;
let outsider: SignedIn;
let mine: string;
let theirs: string;

const BUCKET = 'workspace-files';

function files(user: SignedIn) {
  return (user.client as SupabaseClient).storage.from(BUCKET);
}

beforeAll(async () => {
  server = await startStorageServer();
  owner = await signUp(server, 'files-owner');
  viewer = await signUp(server, 'files-viewer');
  outsider = await signUp(server, 'files-outsider');
  mine = await workspace(server, owner, 'Files Co', [[viewer, 'viewer']]);
  theirs = await workspace(server, outsider, 'Other Co');
  await files(owner).upload(`${mine}/plan.txt`, new Blob(['our plan']));
  await files(outsider).upload(`${theirs}/secret.txt`, new Blob(['their secret']));
});
afterAll(async () => server?.close());

test('members write and read their workspace files; viewers read but do not write', async () => {
  expect(await (await files(owner).download(`${mine}/plan.txt`)).data?.text()).toBe('our plan');
  expect(await (await files(viewer).download(`${mine}/plan.txt`)).data?.text()).toBe('our plan');
  expect((await files(viewer).list(mine)).data?.map((o) => o.name)).toEqual(['plan.txt']);
  const write = await files(viewer).upload(`${mine}/viewer.txt`, new Blob(['x']));
  expect(write.error).toMatchObject({
    statusCode: '403',
    message: 'new row violates row-level security policy',
  });
  expect((await files(viewer).remove([`${mine}/plan.txt`])).data).toEqual([]);
  expect((await files(owner).exists(`${mine}/plan.txt`)).data).toBe(true);
  // The bucket itself is visible to signed-in users, so its options can be read.
  expect((await (owner.client as SupabaseClient).storage.getBucket(BUCKET)).data?.public).toBe(false);
});

test('another workspace files are out of reach for every operation', async () => {
  const secret = `${theirs}/secret.txt`;
  const me = files(owner);
  expect((await me.download(secret)).error).toBeTruthy();
  expect((await me.info(secret)).error).toMatchObject({ statusCode: '404' });
  expect((await me.exists(secret)).data).toBe(false);
  expect((await me.list(theirs)).data).toEqual([]);
  expect((await me.listV2({ prefix: `${theirs}/` })).data?.objects).toEqual([]);
  expect((await me.createSignedUrl(secret, 60)).error).toMatchObject({ statusCode: '404' });
  const batch = await me.createSignedUrls([secret], 60);
  expect(batch.data?.[0]).toMatchObject({ signedUrl: null, error: expect.any(String) });
  expect((await me.upload(`${theirs}/planted.txt`, new Blob(['x']))).error).toMatchObject({
    statusCode: '403',
  });
  expect((await me.upload(secret, new Blob(['x']), { upsert: true })).error).toMatchObject({
    statusCode: '403',
  });
  expect((await me.update(secret, new Blob(['x']))).error).toBeTruthy();
  expect((await me.createSignedUploadUrl(`${theirs}/planted.txt`)).error).toMatchObject({
    statusCode: '403',
  });
  expect((await me.move(secret, `${mine}/stolen.txt`)).error).toMatchObject({ statusCode: '404' });
  expect((await me.copy(secret, `${mine}/stolen.txt`)).error).toMatchObject({ statusCode: '404' });
  // Moving or copying one's own file into another workspace is a write there: refused.
  expect((await me.move(`${mine}/plan.txt`, `${theirs}/gift.txt`)).error).toMatchObject({
    statusCode: '403',
  });
  expect((await me.copy(`${mine}/plan.txt`, `${theirs}/gift.txt`)).error).toMatchObject({
    statusCode: '403',
  });
  expect((await me.remove([secret])).data).toEqual([]);
  // A first folder that is not a workspace id is refused, not an error.
  expect((await me.upload('not-a-uuid/file.txt', new Blob(['x']))).error).toMatchObject({
    statusCode: '403',
  });

  // Nothing changed on their side.
  const them = files(outsider);
  expect(await (await them.download(secret)).data?.text()).toBe('their secret');
  expect((await them.list(theirs)).data?.map((o) => o.name)).toEqual(['secret.txt']);
  expect((await files(owner).list(mine)).data?.map((o) => o.name)).toEqual(['plan.txt']);
  // Anonymous callers reach nothing.
  const anon = server.client().storage.from(BUCKET);
  expect((await anon.download(`${mine}/plan.txt`)).error).toBeTruthy();
  expect((await anon.list(mine)).data).toEqual([]);
});

test('the plan storage limit is enforced on upload, while streaming, and frees with deletions', async () => {
  const ws = await workspace(server, owner, 'Quota Co');
  await syncPlanStorageLimits(server.pool, [{ plan: 'free', maxBytes: 1000 }]);
  try {
    const me = files(owner);
    expect((await me.upload(`${ws}/a.bin`, new Blob([Buffer.alloc(600)]))).error).toBeNull();
    const before = await server.storedCount();
    const over = await me.upload(`${ws}/b.bin`, new Blob([Buffer.alloc(600)]));
    expect(over.error).toMatchObject({
      statusCode: '413',
      message: "This workspace has reached its plan's storage limit",
    });
    expect(await server.storedCount()).toBe(before);
    // Replacing a file counts only the difference.
    expect(
      (await me.upload(`${ws}/a.bin`, new Blob([Buffer.alloc(900)]), { upsert: true })).error,
    ).toBeNull();
    await me.remove([`${ws}/a.bin`]);
    expect((await me.upload(`${ws}/b.bin`, new Blob([Buffer.alloc(600)]))).error).toBeNull();
    const used = await server.pool.query<{ bytes: string }>(
      'select bytes from internal.workspace_storage_usage where workspace_id = $1',
      [ws],
    );
    expect(Number(used.rows[0]!.bytes)).toBe(600);
    // Other workspaces have their own allowance.
    expect((await files(owner).upload(`${mine}/big.bin`, new Blob([Buffer.alloc(900)]))).error).toBeNull();
  } finally {
    await syncPlanStorageLimits(server.pool, [{ plan: 'free', maxBytes: null }]);
  }
});

test('deleting a workspace deletes its files: rows at once, bytes after commit', async () => {
  const ws = await workspace(server, owner, 'Short-lived Co');
  await files(owner).upload(`${ws}/one.txt`, new Blob(['1']));
  await files(owner).upload(`${ws}/two.txt`, new Blob(['2']));
  await server.drainDeletions();
  const before = await server.storedCount();
  const { error } = await (owner.client as SupabaseClient).from('workspaces').delete().eq('id', ws);
  expect(error).toBeNull();
  const rows = await server.pool.query('select 1 from storage.objects where path_tokens[1] = $1', [ws]);
  expect(rows.rowCount).toBe(0);
  await server.drainDeletions();
  expect(await server.storedCount()).toBe(before - 2);
  // Other workspaces' files are untouched.
  expect(await (await files(owner).download(`${mine}/plan.txt`)).data?.text()).toBe('our plan');
  const response = await storageFetch(server, 'GET', `/object/${BUCKET}/${theirs}/secret.txt`);
  expect(response.status).toBe(200);
});

test("deleting an account deletes the files of the workspaces it alone owned, not others'", async () => {
  const leaving = await signUp(server, 'files-leaving');
  const solo = await workspace(server, leaving, 'Solo Co');
  await files(leaving).upload(`${solo}/mine.txt`, new Blob(['solo']));
  await files(owner).upload(`${mine}/kept.txt`, new Blob(['kept']));
  await server.drainDeletions();
  const before = await server.storedCount();
  const { error } = await server.adminClient().auth.admin.deleteUser(leaving.id);
  expect(error).toBeNull();
  const rows = await server.pool.query('select 1 from storage.objects where path_tokens[1] = $1', [solo]);
  expect(rows.rowCount).toBe(0);
  await server.drainDeletions();
  expect(await server.storedCount()).toBe(before - 1);
  expect(await (await files(owner).download(`${mine}/kept.txt`)).data?.text()).toBe('kept');
});

test("a paid workspace is held to its plan's storageBytes, a free one to the free plan's", async () => {
  const paid = await workspace(server, owner, 'Paid Co');
  const free = await workspace(server, owner, 'Free Co');
  await server.pool.query(`insert into internal.plan_limits (plan, seats, projects) values ('pro', null, null)
                           on conflict (plan) do nothing`);
  await server.pool.query(
    `insert into public.subscriptions (workspace_id, plan, status) values ($1, 'pro', 'active')
     on conflict (workspace_id) do update set plan = 'pro', status = 'active'`,
    [paid],
  );
  await syncPlanStorageLimits(server.pool, [
    { plan: 'free', maxBytes: 500 },
    { plan: 'pro', maxBytes: 5000 },
  ]);
  try {
    const me = files(owner);
    expect((await me.upload(`${paid}/big.bin`, new Blob([Buffer.alloc(3000)]))).error).toBeNull();
    expect((await me.upload(`${free}/big.bin`, new Blob([Buffer.alloc(3000)]))).error).toMatchObject({
      statusCode: '413',
    });
    const limits = await server.pool.query<{ paid: string; free: string }>(
      'select tenantry.storage_bytes_limit($1) as paid, tenantry.storage_bytes_limit($2) as free',
      [paid, free],
    );
    expect(limits.rows[0]).toEqual({ paid: '5000', free: '500' });
  } finally {
    await syncPlanStorageLimits(server.pool, [{ plan: 'free', maxBytes: null }]);
  }
});
