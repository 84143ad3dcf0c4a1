// A token outlives its session, its user's ban and its user's deletion; the database does not take
// its word for them (migration 0045). Every request that acts for such a caller is refused at
// once, reads and writes alike, through the data API and through operations called any other way.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { withRls, withService, type Claims } from '../../src/server/db/transactions.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

function decodeClaims(token: string): Claims {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Claims;
}

async function rest(token: string | null, path: string, init: RequestInit = {}) {
  const res = await fetch(`${server.url}/rest/v1${path}`, {
    ...init,
    headers: {
      apikey: server.config.projectApiKey,
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      'content-type': 'application/json',
      ...(init.headers as Record<string, string> | undefined),
    },
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> | null };
}

/** What the caller can still do with the token it holds: read, write and call an operation. */
async function attempts(user: SignedIn, ws: string) {
  const read = await rest(user.accessToken, `/projects?workspace_id=eq.${ws}&select=id`);
  const write = await rest(user.accessToken, '/projects', {
    method: 'POST',
    body: JSON.stringify({ workspace_id: ws, name: 'after the end' }),
  });
  const call = await rest(user.accessToken, '/rpc/create_workspace', {
    method: 'POST',
    body: JSON.stringify({ name: 'Recreated' }),
  });
  return { read, write, call };
}

async function projectsNamed(ws: string, name: string): Promise<number> {
  const r = await server.pool.query<{ n: number }>(
    'select count(*)::int as n from public.projects where workspace_id = $1 and name = $2',
    [ws, name],
  );
  return r.rows[0]!.n;
}

describe('a caller who no longer stands is refused at once', () => {
  test('a live session reads, writes and calls operations', async () => {
    const user = await signUp(server, 'live');
    const ws = await workspace(server, user, 'Live');
    const { read, write, call } = await attempts(user, ws);
    expect([read.status, write.status, call.status]).toEqual([200, 201, 200]);
  });

  test('after sign-out, the session’s access token is refused everywhere', async () => {
    const user = await signUp(server, 'signedout');
    const ws = await workspace(server, user, 'Signed out');
    const { error } = await user.client.auth.signOut({ scope: 'local' });
    expect(error).toBeNull();
    const { read, write, call } = await attempts(user, ws);
    for (const answer of [read, write, call]) {
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({
        code: 'PGRST303',
        message: 'This session has ended: sign in again',
      });
    }
    expect(await projectsNamed(ws, 'after the end')).toBe(0);
  });

  test('a banned account is refused at once', async () => {
    const user = await signUp(server, 'banned');
    const ws = await workspace(server, user, 'Banned');
    const admin = server.adminClient();
    expect((await admin.auth.admin.updateUserById(user.id, { ban_duration: '24h' })).error).toBeNull();
    // Banning ends the sessions too (as GoTrue's does) or not: either way the token is refused.
    const { read, write, call } = await attempts(user, ws);
    for (const answer of [read, write, call]) expect(answer.status).toBe(401);
    expect(await projectsNamed(ws, 'after the end')).toBe(0);
  });

  test('a soft-deleted account cannot recreate workspaces after its deletion released them', async () => {
    const user = await signUp(server, 'deleted');
    const ws = await workspace(server, user, 'Deleted');
    const admin = server.adminClient();
    expect((await admin.auth.admin.deleteUser(user.id, true)).error).toBeNull();
    const { read, write, call } = await attempts(user, ws);
    for (const answer of [read, write, call]) {
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ code: 'PGRST303' });
    }
    const owned = await server.pool.query(`select 1 from public.workspace_members where user_id = $1`, [
      user.id,
    ]);
    expect(owned.rowCount).toBe(0);
  });

  test('operations refuse such a caller even when its claims are set some other way', async () => {
    const user = await signUp(server, 'direct');
    const claims = decodeClaims(user.accessToken);
    await withService(server.pool, (tx) =>
      tx.query('delete from auth.sessions where user_id = $1', [user.id]),
    );
    // A transaction that sets the claims itself, bypassing the service's opening check.
    const error = await withService(server.pool, async (tx) => {
      await tx.query(
        `select set_config('request.jwt.claims', $1, true), set_config('role', 'authenticated', true)`,
        [JSON.stringify(claims)],
      );
      return tx.query(`select public.create_workspace('Sideways')`).then(
        () => null,
        (e: { code?: string; message?: string }) => e,
      );
    }).catch((e: { code?: string }) => e);
    expect(error).toMatchObject({ code: 'PGRST' });
    // The service's own path for pages and server actions refuses too.
    await expect(withRls(server.pool, claims, (tx) => tx.query('select 1'))).rejects.toMatchObject({
      code: 'PGRST',
    });
  });

  test('tokens without a user (anon, the service role) are not asked about', async () => {
    // Anonymous callers may not read projects at all: refused by privileges, not by standing.
    const anon = await rest(null, '/projects?select=id');
    expect(anon.body).toMatchObject({ code: '42501' });
    const service = await server.adminClient().from('projects').select('id').limit(1);
    expect(service.status).toBe(200);
  });
});
