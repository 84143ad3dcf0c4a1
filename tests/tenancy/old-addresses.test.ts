// A workspace's old addresses (0029) stay reserved for it while they redirect (0094): no other
// workspace takes one, by a rename or by creating a workspace with it; the workspace itself may
// take it back, and deleting the workspace frees them.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPool, type Pool } from '../../src/server/db/pool.js';
import { withService } from '../../src/server/db/transactions.js';
import { createTestDatabase } from '../support/server.js';
import { asUser, attempt, createUser, rpc, type TestUser } from '../support/tenancy.js';

let pool: Pool;
beforeAll(async () => {
  pool = createPool(await createTestDatabase(), { max: 8 });
});
afterAll(async () => pool?.end());

const fresh = (label: string) => `${label}-${randomUUID().slice(0, 8)}`;

async function workspace(owner: TestUser, slug: string) {
  return rpc<{ id: string; slug: string }>(pool, owner, 'public.create_workspace($1, $2)', ['Team', slug]);
}

async function rename(owner: TestUser, id: string, slug: string) {
  return attempt(pool, owner, 'update public.workspaces set slug = $2 where id = $1', [id, slug]);
}

async function renameForGood(owner: TestUser, id: string, slug: string) {
  await asUser(pool, owner, (tx) =>
    tx.query('update public.workspaces set slug = $2 where id = $1', [id, slug]),
  );
}

const leadsTo = (user: TestUser, old: string) =>
  rpc<string | null>(pool, user, 'internal.renamed_workspace_slug($1)', [old]);

describe('an old address is reserved for its workspace', () => {
  test('another workspace cannot rename itself to it, and it still redirects', async () => {
    const [ada, bob] = await Promise.all([createUser(pool, 'ada'), createUser(pool, 'bob')]);
    const old = fresh('acme');
    const acme = await workspace(ada, old);
    await renameForGood(ada, acme.id, fresh('acme-new'));
    const other = await workspace(bob, fresh('other'));

    const outcome = await rename(bob, other.id, old);
    expect(outcome).toMatchObject({ ok: false, code: '23505' });
    expect(outcome.ok ? '' : outcome.message).toBe(
      `The slug "${old}" is taken: it is another workspace's old address, which still leads there`,
    );
    const row = await pool.query('select slug from public.workspaces where id = $1', [other.id]);
    expect(row.rows[0].slug).toBe(other.slug);
    await expect(leadsTo(ada, old)).resolves.toMatch(/^acme-new-/);
  });

  test('nor may a new workspace be created at it; a derived address steps around it', async () => {
    const ada = await createUser(pool, 'ada');
    const bob = await createUser(pool, 'bob');
    const acme = await workspace(ada, 'rocketry');
    await renameForGood(ada, acme.id, fresh('rocketry-new'));

    await expect(
      rpc(pool, bob, 'public.create_workspace($1, $2)', ['Rocketry', 'rocketry']),
    ).rejects.toMatchObject({ code: '23505' });
    const derived = await rpc<{ slug: string }>(pool, bob, 'public.create_workspace($1)', ['Rocketry']);
    expect(derived.slug).toMatch(/^rocketry-[0-9a-f]{6}$/);
    await expect(leadsTo(ada, 'rocketry')).resolves.toMatch(/^rocketry-new-/);
  });

  test('the workspace that had it may take it back', async () => {
    const ada = await createUser(pool, 'ada');
    const old = fresh('back');
    const ws = await workspace(ada, old);
    await renameForGood(ada, ws.id, fresh('away'));
    await renameForGood(ada, ws.id, old);
    const row = await pool.query('select slug from public.workspaces where id = $1', [ws.id]);
    expect(row.rows[0].slug).toBe(old);
  });

  test('deleting the workspace frees its old addresses', async () => {
    const [ada, bob] = await Promise.all([createUser(pool, 'ada'), createUser(pool, 'bob')]);
    const old = fresh('gone');
    const ws = await workspace(ada, old);
    await renameForGood(ada, ws.id, fresh('gone-new'));
    await withService(pool, (tx) => tx.query('delete from public.workspaces where id = $1', [ws.id]));
    await expect(workspace(bob, old)).resolves.toMatchObject({ slug: old });
  });

  test('a workspace keeps at most 20 old addresses; past them it may still go back to one', async () => {
    const ada = await createUser(pool, 'ada');
    const first = fresh('many');
    const ws = await workspace(ada, first);
    for (let i = 1; i <= 20; i++) await renameForGood(ada, ws.id, `${first}-${i}`);
    const kept = await pool.query(
      'select count(*)::int as n from internal.workspace_slug_history where workspace_id = $1',
      [ws.id],
    );
    expect(kept.rows[0].n).toBe(20);

    // A 21st old address would be reserved: refused, and nothing changes.
    const outcome = await rename(ada, ws.id, fresh('one-more'));
    expect(outcome).toMatchObject({ ok: false, code: '23514' });
    expect(outcome.ok ? '' : outcome.message).toMatch(/has had 20 other addresses/);
    const row = await pool.query('select slug from public.workspaces where id = $1', [ws.id]);
    expect(row.rows[0].slug).toBe(`${first}-20`);

    // Going back to an old address adds none (the current one takes its place).
    await renameForGood(ada, ws.id, first);
    const after = await pool.query('select slug from public.workspaces where id = $1', [ws.id]);
    expect(after.rows[0].slug).toBe(first);
    await expect(leadsTo(ada, `${first}-20`)).resolves.toBe(first);
  });
});
