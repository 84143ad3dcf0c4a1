// One account cannot create workspaces without end (migration 0046): past the configured number
// of workspaces it owns, create_workspace is refused with 403 TNTRY403 over the data API and
// nothing is written; memberships in other people's workspaces do not count; deleting one frees
// a place; simultaneous calls cannot slip past the limit; the service itself is not limited.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/server/config.js';
import { withService } from '../../src/server/db/transactions.js';
import { syncAppSettings } from '../../src/server/settings.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';

const LIMIT = 3;
const secrets = {
  JWT_SECRET: 'j'.repeat(40),
  PROJECT_API_KEY: 'p'.repeat(30),
  SERVICE_ROLE_KEY: 's'.repeat(30),
  PAYMENT_WEBHOOK_SECRET: 'whsec_' + 'w'.repeat(20),
  CRON_SECRET: 'c'.repeat(30),
};
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  await syncAppSettings(server.pool, { appUrl: server.url, maxWorkspacesPerUser: LIMIT });
});
afterAll(async () => server?.close());

async function create(user: SignedIn, name: string) {
  const res = await fetch(`${server.url}/rest/v1/rpc/create_workspace`, {
    method: 'POST',
    headers: {
      apikey: server.config.projectApiKey,
      authorization: `Bearer ${user.accessToken}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Everything creating a workspace writes, counted for one user. */
async function footprint(user: SignedIn) {
  const r = await server.pool.query<{
    workspaces: number;
    owned: number;
    subscriptions: number;
    events: number;
  }>(
    `select (select count(*) from public.workspaces where created_by = $1)::int as workspaces,
            (select count(*) from public.workspace_members where user_id = $1 and role = 'owner')::int as owned,
            (select count(*) from public.subscriptions s join public.workspaces w on w.id = s.workspace_id
              where w.created_by = $1)::int as subscriptions,
            (select count(*) from public.activity_events where actor_id = $1)::int as events`,
    [user.id],
  );
  return r.rows[0]!;
}

describe('workspaces one user may own', () => {
  test('the one past the limit is refused with a clear 403 and writes nothing', async () => {
    const user = await signUp(server, 'cap');
    for (let i = 1; i <= LIMIT; i++) expect((await create(user, `Mine ${i}`)).status).toBe(200);
    const before = await footprint(user);
    expect(before.owned).toBe(LIMIT);

    const refused = await create(user, 'One too many');
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      code: 'TNTRY403',
      message: `You already own ${LIMIT} workspaces, the most one account may own`,
      details: `Each account may own up to ${LIMIT} workspaces (MAX_WORKSPACES_PER_USER)`,
      hint: 'Delete a workspace you no longer use, or make someone else its owner and leave it',
    });
    expect(await footprint(user)).toEqual(before);

    // supabase-js sees the same error
    const { error } = await user.client.rpc('create_workspace', { name: 'Through the client' });
    expect(error).toMatchObject({ code: 'TNTRY403' });
    expect(await footprint(user)).toEqual(before);
  });

  test('memberships in other people’s workspaces do not count; a deletion frees a place', async () => {
    const owner = await signUp(server, 'host');
    const user = await signUp(server, 'guest');
    // owned by others (each owner within their own limit), with the user as admin or member
    for (let i = 0; i < LIMIT + 2; i++) {
      await workspace(server, i === 0 ? owner : await signUp(server, 'host'), `Team ${i}`, [
        [user, i % 2 ? 'member' : 'admin'],
      ]);
    }
    for (let i = 1; i <= LIMIT; i++) expect((await create(user, `Own ${i}`)).status).toBe(200);
    expect((await create(user, 'Over')).status).toBe(403);

    const { data } = await user.client.from('workspaces').select('id').eq('name', 'Own 1').single();
    const { error } = await user.client
      .from('workspaces')
      .delete()
      .eq('id', (data as { id: string }).id);
    expect(error).toBeNull();
    expect((await create(user, 'In its place')).status).toBe(200);
    expect((await create(user, 'Over again')).status).toBe(403);
  });

  test('calls made at the same moment cannot slip past the limit', async () => {
    const user = await signUp(server, 'race');
    expect((await create(user, 'First')).status).toBe(200);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => create(user, `Racing ${i}`)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(LIMIT - 1);
    expect(statuses.filter((s) => s === 403)).toHaveLength(8 - (LIMIT - 1));
    expect((await footprint(user)).owned).toBe(LIMIT);
  });

  test('the service may seed past the limit; the account keeps what it owns but cannot add more', async () => {
    const user = await signUp(server, 'seeded');
    await withService(server.pool, async (tx) => {
      await tx.query(
        `with made as (
           insert into public.workspaces (name, slug, created_by)
           select 'Old ' || i, 'old-' || i || '-' || left(md5($1::text), 8), $1::uuid from generate_series(1, $2::int) i
           returning id)
         insert into public.workspace_members (workspace_id, user_id, role) select id, $1::uuid, 'owner' from made`,
        [user.id, LIMIT * 3],
      );
    });
    const { data } = await user.client.from('workspaces').select('id');
    expect(data).toHaveLength(LIMIT * 3);
    expect((await create(user, 'Newer')).status).toBe(403);
  });

  test('MAX_WORKSPACES_PER_USER is validated, and what start-up writes is what the database applies', async () => {
    const env = { DATABASE_URL: 'postgres://x@localhost/db', ...secrets };
    await expect(loadConfig({ ...env, MAX_WORKSPACES_PER_USER: '0' })).rejects.toThrow(
      /MAX_WORKSPACES_PER_USER/,
    );
    await expect(loadConfig({ ...env, MAX_WORKSPACES_PER_USER: 'many' })).rejects.toThrow(
      /MAX_WORKSPACES_PER_USER/,
    );
    expect((await loadConfig(env)).maxWorkspacesPerUser).toBe(100);
    const config = await loadConfig({ ...env, MAX_WORKSPACES_PER_USER: '1' });
    expect(config.maxWorkspacesPerUser).toBe(1);

    const user = await signUp(server, 'one');
    try {
      await syncAppSettings(server.pool, {
        appUrl: server.url,
        maxWorkspacesPerUser: config.maxWorkspacesPerUser,
      });
      expect((await create(user, 'Only')).status).toBe(200);
      expect((await create(user, 'Second')).status).toBe(403);
    } finally {
      await syncAppSettings(server.pool, { appUrl: server.url, maxWorkspacesPerUser: LIMIT });
    }
  });
});
