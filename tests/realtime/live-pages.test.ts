// What the web app's live workspace pages stand on (migration 0084, decision 0082), through
// supabase-js against the real server: the private channel `workspace:<id>` is its members' and
// nobody else's; the live token a page is handed carries the session's claims, expires no later
// than the session's token or its own short life, and stops at the session's sign-out; changes to
// projects, activity, members and invitations reach the workspace's members only; a removed member
// is told of their own removal, and their channel closes at their next token.
import type { RealtimeChannel } from '@supabase/supabase-js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  createTokenSigner,
  verifyAccessToken,
  type TokenSigner,
} from '../../src/server/identity/access-tokens.js';
import { withService } from '../../src/server/db/transactions.js';
import { liveToken } from '../../src/server/web-session/live-token.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';
import { realtimeClient, sleep, subscribe } from './support.js';

let server: TestServer;
let signer: TokenSigner;
let owner: SignedIn;
let member: SignedIn;
let stranger: SignedIn;
let wsA: string;
let wsB: string;

beforeAll(async () => {
  server = await startTestServer();
  const { config } = server;
  signer = createTokenSigner({
    secret: config.jwtSecret,
    issuer: config.jwtIssuer,
    ttlSeconds: config.accessTokenTtlSeconds,
    keys: config.jwtKeys,
    acceptSecret: config.jwtSecretAccepted,
  });
  owner = await signUp(server, 'live-owner');
  member = await signUp(server, 'live-member');
  stranger = await signUp(server, 'live-stranger');
  wsA = await workspace(server, owner, 'Live Alpha', [[member, 'member']]);
  wsB = await workspace(server, stranger, 'Live Beta');
});
afterAll(async () => {
  await server?.close();
});

async function live(user: SignedIn, life = 120): Promise<string> {
  const claims = await verifyAccessToken(signer, user.accessToken);
  const minted = await liveToken(signer, claims, life);
  if (!minted) throw new Error('no live token');
  return minted.token;
}

/** A realtime client presenting `token`, joined to `workspace:<id>` with the app's bindings. */
function pageChannel(token: string, workspaceId: string) {
  const client = realtimeClient(server);
  client.realtime.setAuth(token);
  const seen = {
    changes: [] as { table: string; eventType: string; old: Record<string, unknown> }[],
    system: [] as Record<string, unknown>[],
    statuses: [] as string[],
  };
  const channel: RealtimeChannel = client.channel(`workspace:${workspaceId}`, {
    config: { private: true },
  });
  for (const table of ['projects', 'activity_events', 'workspace_members', 'invitations']) {
    channel.on(
      'postgres_changes',
      { event: '*', schema: 'public', table, filter: `workspace_id=eq.${workspaceId}` },
      (change: { table: string; eventType: string; old: Record<string, unknown> }) =>
        seen.changes.push(change),
    );
  }
  channel.on('system', {}, (payload: Record<string, unknown>) => seen.system.push(payload));
  return { client, channel, seen };
}

async function until(check: () => boolean, ms = 8000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(50);
  }
}

test('the live token is the session’s claims with a shorter life, never past the session token', async () => {
  const session = await verifyAccessToken(signer, member.accessToken);
  const now = Math.floor(Date.now() / 1000);
  const minted = (await liveToken(signer, session, 120, now))!;
  const claims = await verifyAccessToken(signer, minted.token);
  expect(claims.exp).toBe(now + 120);
  const { exp, iat, ...same } = claims;
  const { exp: sessionExp, iat: sessionIat, ...sessionSame } = session;
  expect(same).toEqual(sessionSame);
  expect(exp).toBeLessThanOrEqual(sessionExp);
  expect(iat).toBeGreaterThanOrEqual(sessionIat);
  // Near the session token's end, the live token ends with it; past it, there is none.
  const late = (await liveToken(signer, session, 120, session.exp - 30))!;
  expect((await verifyAccessToken(signer, late.token).catch(() => null))?.exp ?? session.exp).toBe(
    session.exp,
  );
  expect(late.expiresAt).toBe(session.exp);
  expect(await liveToken(signer, session, 120, session.exp)).toBeNull();
});

test('members join workspace:<id>; a member of another workspace and anonymous callers are refused', async () => {
  const mine = pageChannel(await live(member), wsA);
  expect((await subscribe(mine.channel)).status).toBe('SUBSCRIBED');
  const theirs = pageChannel(await live(stranger), wsA);
  const refused = await subscribe(theirs.channel);
  expect(refused.status).toBe('CHANNEL_ERROR');
  expect(refused.error?.message).toBe(
    `Unauthorized: You do not have permissions to read from this Channel topic: workspace:${wsA}`,
  );
  const anonymous = realtimeClient(server).channel(`workspace:${wsA}`, { config: { private: true } });
  expect((await subscribe(anonymous)).status).toBe('CHANNEL_ERROR');
  // Their own workspace's channel is theirs.
  const own = pageChannel(await live(stranger), wsB);
  expect((await subscribe(own.channel)).status).toBe('SUBSCRIBED');
  await Promise.all([mine.client, theirs.client, own.client].map((c) => c.removeAllChannels()));
});

test('a workspace’s changes reach its members and nobody else, even a subscriber without a filter', async () => {
  const mine = pageChannel(await live(owner), wsA);
  expect((await subscribe(mine.channel)).status).toBe('SUBSCRIBED');
  const other = realtimeClient(server);
  other.realtime.setAuth(await live(stranger));
  const leaked: unknown[] = [];
  const wide = other.channel('anything');
  for (const table of ['projects', 'activity_events', 'workspace_members', 'invitations']) {
    wide.on('postgres_changes', { event: '*', schema: 'public', table }, (c: unknown) => leaked.push(c));
  }
  expect((await subscribe(wide)).status).toBe('SUBSCRIBED');

  const { data: project, error } = await owner.client
    .from('projects')
    .insert({ workspace_id: wsA, name: 'Live launch' })
    .select('id')
    .single();
  expect(error).toBeNull();
  await until(() => mine.seen.changes.some((c) => c.table === 'projects' && c.eventType === 'INSERT'));
  await until(() => mine.seen.changes.some((c) => c.table === 'activity_events'));
  const { error: deleted } = await owner.client.from('projects').delete().eq('id', project!.id);
  expect(deleted).toBeNull();
  // A delete passes the workspace filter: its old image carries the workspace (replica identity full).
  await until(() => mine.seen.changes.some((c) => c.table === 'projects' && c.eventType === 'DELETE'));
  const { error: invited } = await owner.client.rpc('invite_member', {
    workspace_id: wsA,
    email: 'live-invitee@example.com',
    role: 'member',
  });
  expect(invited).toBeNull();
  await until(() => mine.seen.changes.some((c) => c.table === 'invitations' && c.eventType === 'INSERT'));
  await sleep(500);
  expect(leaked).toEqual([]);
  await Promise.all([mine.client, other].map((c) => c.removeAllChannels()));
});

test('a removed member is told of their own removal; their channel closes at their next token', async () => {
  const removed = await signUp(server, 'live-removed');
  await withService(server.pool, (tx) =>
    tx.query(`insert into public.workspace_members (workspace_id, user_id, role) values ($1, $2, 'member')`, [
      wsA,
      removed.id,
    ]),
  );
  const page = pageChannel(await live(removed), wsA);
  page.channel.subscribe((status) => page.seen.statuses.push(status));
  await until(() => page.seen.statuses.includes('SUBSCRIBED'));
  const { error } = await owner.client
    .from('workspace_members')
    .delete()
    .eq('workspace_id', wsA)
    .eq('user_id', removed.id);
  expect(error).toBeNull();
  await until(() =>
    page.seen.changes.some(
      (c) => c.table === 'workspace_members' && c.eventType === 'DELETE' && c.old.user_id === removed.id,
    ),
  );
  // Nothing else of the workspace reaches them any more.
  const before = page.seen.changes.length;
  await owner.client.from('projects').insert({ workspace_id: wsA, name: 'After they left' });
  await sleep(800);
  expect(page.seen.changes.slice(before)).toEqual([]);
  // The page's next live token: the server asks the policies again and closes the channel.
  await page.client.realtime.setAuth(await live(removed, 100));
  await until(() => page.seen.statuses.includes('CLOSED'));
  expect(page.seen.system.some((s) => String(s.message).includes('no longer have permission'))).toBe(true);
});

test('a signed-out session’s live token is refused', async () => {
  const leaving = await signUp(server, 'live-leaving');
  await withService(server.pool, (tx) =>
    tx.query(`insert into public.workspace_members (workspace_id, user_id, role) values ($1, $2, 'viewer')`, [
      wsA,
      leaving.id,
    ]),
  );
  const token = await live(leaving);
  const before = pageChannel(token, wsA);
  expect((await subscribe(before.channel)).status).toBe('SUBSCRIBED');
  await before.client.removeAllChannels();
  await leaving.client.auth.signOut();
  const after = pageChannel(token, wsA);
  const refused = await subscribe(after.channel);
  expect(refused.status).toBe('CHANNEL_ERROR');
  expect(refused.error?.message).toBe('Unauthorized: This session has ended: sign in again');
});
