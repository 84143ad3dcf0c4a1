// postgres_changes through supabase-js (ws transport), on a table of the publication under
// row-level security by workspace: each workspace's members receive only their own rows' changes
// (insert, update, delete), filters and column lists narrow them, a removed member stops
// receiving, a subscriber whose policy raises does not stop the others, payloads are Supabase's
// (commit_timestamp, typnames, old_record, 413), and a filter that cannot be read is a system
// message that leaves the channel open.
import type { RealtimeChannel, SupabaseClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { withService } from '../../src/server/db/transactions.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';
import { first, RawSocket, realtimeClient, sleep } from './support.js';

/** What realtime-js hands a postgres_changes callback. */
interface Change {
  schema: string;
  table: string;
  commit_timestamp: string;
  eventType: 'INSERT' | 'UPDATE' | 'DELETE';
  new: Record<string, unknown>;
  old: Record<string, unknown>;
  errors: string[] | null;
}

let server: TestServer;
let ada: SignedIn;
let bob: SignedIn;
let cy: SignedIn;
let wsA: string;
let wsB: string;

beforeAll(async () => {
  server = await startTestServer();
  ada = await signUp(server, 'ada');
  bob = await signUp(server, 'bob');
  cy = await signUp(server, 'cy');
  wsA = await workspace(server, ada, 'Alpha', [[cy, 'member']]);
  wsB = await workspace(server, bob, 'Beta');
  await server.pool.query(`
    create table public.rt_notes (
      id bigint generated always as identity primary key,
      workspace_id uuid not null,
      title text not null,
      priority integer not null default 0,
      done boolean not null default false,
      body text
    );
    alter table public.rt_notes enable row level security;
    alter table public.rt_notes force row level security;
    create policy rt_notes_read on public.rt_notes for select to authenticated
      using (workspace_id = any ((select tenantry.workspace_ids())::uuid[]));
    grant select on public.rt_notes to authenticated;
    select realtime.enable_changes('public.rt_notes');
    -- A policy that raises for some callers: a claim cast to uuid, as in supabase/realtime#2093.
    create table public.rt_fragile (id bigint primary key, note text);
    alter table public.rt_fragile enable row level security;
    create policy rt_fragile_read on public.rt_fragile for select to authenticated
      using (case when (select auth.jwt()->>'email') like 'bad-%'
                  then (select auth.jwt()->>'email')::uuid is not null else true end);
    grant select on public.rt_fragile to authenticated;
    alter publication supabase_realtime add table public.rt_fragile;`);
});
afterAll(async () => {
  await server?.close();
});

async function insert(
  workspaceId: string,
  title: string,
  extra: Record<string, unknown> = {},
): Promise<number> {
  const columns = ['workspace_id', 'title', ...Object.keys(extra)];
  const values = [workspaceId, title, ...Object.values(extra)];
  const { rows } = await server.pool.query<{ id: string }>(
    `insert into public.rt_notes (${columns.join(', ')}) values (${columns.map((_, i) => `$${i + 1}`).join(', ')}) returning id`,
    values,
  );
  return Number(rows[0]!.id);
}

/** A channel of `who` listening to rt_notes, collecting what arrives (and its system messages). */
async function listen(
  who: SignedIn,
  binding: {
    event?: '*' | 'INSERT' | 'UPDATE' | 'DELETE';
    filter?: string;
    select?: string[];
    table?: string;
  } = {},
  topic = `notes-${Math.random()}`,
): Promise<{ client: SupabaseClient; channel: RealtimeChannel; got: Change[]; system: unknown[] }> {
  const client = realtimeClient(server);
  client.realtime.setAuth(who.accessToken);
  const got: Change[] = [];
  const system: unknown[] = [];
  const channel = client.channel(topic);
  channel.on(
    'postgres_changes',
    {
      event: binding.event ?? '*',
      schema: 'public',
      table: binding.table ?? 'rt_notes',
      ...(binding.filter ? { filter: binding.filter } : {}),
      ...(binding.select ? { select: binding.select } : {}),
    } as { event: '*'; schema: string },
    (payload: Change) => got.push(payload),
  );
  channel.on('system', {}, (payload: unknown) => system.push(payload));
  await first<void>((done) =>
    channel.subscribe((status) => {
      if (status === 'SUBSCRIBED') done();
    }),
  );
  await until(() => system.length > 0);
  return { client, channel, got, system };
}

async function until(predicate: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('not seen in time');
    await sleep(20);
  }
}

test('members of two workspaces each receive only their own rows, with Supabase payloads', async () => {
  const a = await listen(ada);
  const b = await listen(bob);
  expect(a.system[0]).toMatchObject({
    extension: 'postgres_changes',
    status: 'ok',
    message: 'Subscribed to PostgreSQL',
  });

  const idA = await insert(wsA, 'alpha note', { priority: 3 });
  const idB = await insert(wsB, 'beta note');
  await server.pool.query(`update public.rt_notes set title = 'alpha edited' where id = $1`, [idA]);
  await server.pool.query(`update public.rt_notes set title = 'beta edited' where id = $1`, [idB]);
  await server.pool.query('delete from public.rt_notes where id = any($1::bigint[])', [[idA, idB]]);
  await until(() => a.got.length >= 3 && b.got.length >= 3);
  await sleep(300);

  expect(a.got.map((c) => [c.eventType, c.new.id ?? c.old.id])).toEqual([
    ['INSERT', idA],
    ['UPDATE', idA],
    ['DELETE', idA],
  ]);
  expect(b.got.map((c) => [c.eventType, c.new.id ?? c.old.id])).toEqual([
    ['INSERT', idB],
    ['UPDATE', idB],
    ['DELETE', idB],
  ]);
  const [inserted, updated, deleted] = a.got as [Change, Change, Change];
  expect(inserted).toMatchObject({
    schema: 'public',
    table: 'rt_notes',
    eventType: 'INSERT',
    errors: null,
    new: { id: idA, workspace_id: wsA, title: 'alpha note', priority: 3, done: false, body: null },
    old: {},
  });
  expect(inserted.commit_timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  expect(updated).toMatchObject({ new: { title: 'alpha edited' }, old: { id: idA } });
  // A DELETE under row-level security carries the primary key only.
  expect(deleted.old).toEqual({ id: idA });
  expect(deleted.new).toEqual({});
});

test('raw frames: column typnames, the ids of the matching bindings only, the key order', async () => {
  const socket = await RawSocket.open(server, `apikey=${server.config.projectApiKey}&vsn=2.0.0`);
  const bindings = [
    { event: 'INSERT', schema: 'public', table: 'rt_notes' },
    { event: 'DELETE', schema: 'public', table: 'rt_notes' },
  ];
  socket.send([
    '1',
    '1',
    'realtime:raw',
    'phx_join',
    { config: { postgres_changes: bindings, private: false }, access_token: ada.accessToken },
  ]);
  await socket.until((s) => s.frames.length >= 2);
  const [reply, system] = socket.json() as [unknown[], unknown[]];
  const ids = (
    reply[4] as { response: { postgres_changes: { id: number }[] } }
  ).response.postgres_changes.map((b) => b.id);
  expect(system).toEqual([
    '1',
    null,
    'realtime:raw',
    'system',
    { extension: 'postgres_changes', status: 'ok', message: 'Subscribed to PostgreSQL', channel: 'raw' },
  ]);
  await insert(wsA, 'typed');
  await socket.until((s) => s.frames.length >= 3);
  const frame = socket.json()[2] as unknown[];
  expect(frame.slice(0, 4)).toEqual([null, null, 'realtime:raw', 'postgres_changes']);
  const payload = frame[4] as { ids: number[]; data: Record<string, unknown> };
  expect(payload.ids).toEqual([ids[0]]);
  expect(payload.data.type).toBe('INSERT');
  expect(payload.data.columns).toEqual([
    { name: 'id', type: 'int8' },
    { name: 'workspace_id', type: 'uuid' },
    { name: 'title', type: 'text' },
    { name: 'priority', type: 'int4' },
    { name: 'done', type: 'bool' },
    { name: 'body', type: 'text' },
  ]);
  expect(payload.data.old_record).toEqual({});
  expect(Object.keys(payload.data)).toEqual([
    'schema',
    'table',
    'commit_timestamp',
    'type',
    'columns',
    'record',
    'old_record',
    'errors',
  ]);
  socket.close();
});

test('filters: in, not., comma as AND; select narrows the columns to the list and the key', async () => {
  const inList = await listen(ada, { filter: `title=in.(one,"two, quoted")` });
  const negated = await listen(ada, { filter: 'priority=not.gte.5' });
  const both = await listen(ada, { filter: 'priority=gt.1,done=eq.true' });
  const narrow = await listen(ada, { event: 'INSERT', select: ['title'] });
  await insert(wsA, 'one', { priority: 9, done: true });
  await insert(wsA, 'two, quoted', { priority: 1 });
  await insert(wsA, 'three', { priority: 2, done: true });
  await until(() => narrow.got.length >= 3);
  await sleep(300);
  expect(inList.got.map((c) => c.new.title)).toEqual(['one', 'two, quoted']);
  expect(negated.got.map((c) => c.new.title)).toEqual(['two, quoted', 'three']);
  expect(both.got.map((c) => c.new.title)).toEqual(['one', 'three']);
  expect(Object.keys(narrow.got[0]!.new).sort()).toEqual(['id', 'title']);
});

test('a filter that cannot be read is a system error, and the channel stays open', async () => {
  const client = realtimeClient(server);
  client.realtime.setAuth(ada.accessToken);
  const system: { status: string; message: string; extension: string }[] = [];
  const got: unknown[] = [];
  const channel = client.channel(`bad-${Math.random()}`, { config: { broadcast: { self: true } } });
  channel.on(
    'postgres_changes',
    { event: '*', schema: 'public', table: 'rt_notes', filter: 'priority=between.1' },
    () => undefined,
  );
  channel.on('system', {}, (p: { status: string; message: string; extension: string }) => system.push(p));
  channel.on('broadcast', { event: 'ping' }, (m) => got.push(m.payload));
  await first<void>((done) => channel.subscribe((status) => status === 'SUBSCRIBED' && done()));
  await until(() => system.length > 0);
  expect(system[0]).toMatchObject({ extension: 'postgres_changes', status: 'error' });
  expect(system[0]!.message).toMatch(/^Error parsing `filter` params: unknown operator "between"/);
  await channel.send({ type: 'broadcast', event: 'ping', payload: { still: 'open' } });
  await until(() => got.length > 0);
  expect(got).toEqual([{ still: 'open' }]);
  // A value the column's type cannot hold is refused the same way.
  const typed = await listen(ada, { filter: 'priority=eq.high' });
  expect(typed.system[0]).toMatchObject({ status: 'error' });
  expect((typed.system[0] as { message: string }).message).toMatch(/invalid input syntax for type int4/);
});

test('a member removed mid-subscription stops receiving', async () => {
  const c = await listen(cy);
  await insert(wsA, 'before');
  await until(() => c.got.length === 1);
  await withService(server.pool, (tx) =>
    tx.query('delete from public.workspace_members where workspace_id = $1 and user_id = $2', [wsA, cy.id]),
  );
  const a = await listen(ada);
  await insert(wsA, 'after');
  await until(() => a.got.length === 1);
  await sleep(300);
  expect(c.got.map((x) => x.new.title)).toEqual(['before']);
});

test('a subscriber whose policy raises receives nothing, and the others go on receiving', async () => {
  const bad = await signUp(server, 'bad');
  const good = await listen(ada, { table: 'rt_fragile' });
  const broken = await listen(bad, { table: 'rt_fragile' });
  const other = await listen(bob, { table: 'rt_fragile' });
  for (let i = 1; i <= 3; i += 1) {
    await server.pool.query('insert into public.rt_fragile (id, note) values ($1, $2)', [i, `n${i}`]);
  }
  await until(() => good.got.length === 3 && other.got.length === 3);
  await sleep(300);
  expect(broken.got).toEqual([]);
  expect(good.got.map((c) => c.new.id)).toEqual([1, 2, 3]);
});

test('a record over 1 MiB arrives with error 413 and only its small values', async () => {
  const a = await listen(ada);
  await insert(wsA, 'huge', { body: 'x'.repeat(1024 * 1024 + 10) });
  await until(() => a.got.length === 1);
  const change = a.got[0]!;
  expect(change.errors).toEqual(['Error 413: Payload Too Large']);
  expect(change.new.title).toBe('huge');
  expect('body' in change.new).toBe(false);
});

test('a table scoped to its workspace column offers each change only to members of that workspace', async () => {
  await server.pool.query(`
    create table public.rt_scoped (id bigint generated always as identity primary key, workspace_id uuid not null, n int);
    alter table public.rt_scoped enable row level security;
    create policy rt_scoped_read on public.rt_scoped for select to authenticated using (true);
    grant select on public.rt_scoped to authenticated;
    select realtime.enable_changes('public.rt_scoped', scope => 'workspace_id');`);
  await expect(
    server.pool.query(`select realtime.enable_changes('public.rt_scoped', scope => 'n')`),
  ).rejects.toThrow(/has no uuid column n/);
  const member = await listen(ada, { table: 'rt_scoped' });
  const outsider = await listen(bob, { table: 'rt_scoped' });
  await server.pool.query('insert into public.rt_scoped (workspace_id, n) values ($1, 1), ($2, 2)', [
    wsA,
    wsB,
  ]);
  await until(() => member.got.length === 1 && outsider.got.length === 1);
  await sleep(300);
  expect(member.got.map((c) => c.new.n)).toEqual([1]);
  expect(outsider.got.map((c) => c.new.n)).toEqual([2]);
});

test('a signed-out session stops receiving, and a new access_token on the channel brings it back', async () => {
  const dee = await signUp(server, 'dee');
  const wsD = await workspace(server, dee, 'Delta');
  const d = await listen(dee);
  await insert(wsD, 'one');
  await until(() => d.got.length === 1);
  // The token's session ends: its claims no longer pass, though the token has not expired.
  await dee.client.auth.signOut({ scope: 'local' });
  await insert(wsD, 'two');
  await sleep(600);
  expect(d.got.map((c) => c.new.title)).toEqual(['one']);
  // Signed in again: realtime-js pushes the new token to the channel, and changes flow again.
  const { data, error } = await dee.client.auth.signInWithPassword({
    email: dee.email,
    password: 'correct horse battery',
  });
  expect(error).toBeNull();
  await d.client.realtime.setAuth(data.session!.access_token);
  await sleep(200);
  await insert(wsD, 'three');
  await until(() => d.got.length === 2);
  expect(d.got.map((c) => c.new.title)).toEqual(['one', 'three']);
});

test('a transaction that commits after a later one is never stepped over: both arrive, in transaction order', async () => {
  const a = await listen(ada);
  const early = await server.pool.connect();
  try {
    // The first transaction takes its id and writes, then waits; the second writes and commits.
    await early.query('begin');
    await early.query(
      `insert into public.rt_notes (workspace_id, title) values ($1, 'first, commits last')`,
      [wsA],
    );
    await insert(wsA, 'second, commits first');
    await sleep(400);
    // Held back while the earlier transaction runs: nothing yet, and nothing skipped.
    expect(a.got).toEqual([]);
    await early.query('commit');
  } finally {
    early.release();
  }
  await until(() => a.got.length === 2);
  expect(a.got.map((c) => c.new.title)).toEqual(['first, commits last', 'second, commits first']);
  // One that rolls back holds the others back only while it runs.
  const doomed = await server.pool.connect();
  try {
    await doomed.query('begin');
    await doomed.query(`insert into public.rt_notes (workspace_id, title) values ($1, 'rolled back')`, [wsA]);
    await insert(wsA, 'kept');
    await doomed.query('rollback');
  } finally {
    doomed.release();
  }
  await until(() => a.got.length === 3);
  await sleep(200);
  expect(a.got.map((c) => c.new.title)).toEqual(['first, commits last', 'second, commits first', 'kept']);
});
