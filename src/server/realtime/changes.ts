// In charge of postgres_changes (decision 0081): reading realtime.changes, the outbox the capture
// trigger writes, in (txid, id) order and only past transactions that have all ended (so one that
// commits late is never stepped over); deciding who receives each change (bindings, filters, then
// row-level security asked of PostgreSQL per group of identical role and claims, on the row as the
// change left it, a group's error kept to that group); building Supabase's payloads; and resuming
// a subscription that comes back (same session, topic and bindings, on any instance) from where
// its client last acknowledged, or telling it that changes were pruned meanwhile. Every instance
// with subscribers reads for itself: no leader, no LISTEN.
import { createHash, randomUUID } from 'node:crypto';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../logger.js';
import { Catalog, type RequestRole, type WatchedTable } from './catalog.js';
import { FilterError, parseFilter, parseSelect, passes, type Condition } from './filters.js';
import {
  bindingId,
  type PostgresBinding,
  type PostgresChanges,
  type PostgresChangesAnswer,
} from './postgres-changes.js';
import type { Channel, ChannelSocket } from './topics.js';
import { ReaderTurns } from './reader-turns.js';

export interface ChangeFeedOptions {
  pool: Pool;
  logger: Logger;
  /** the schemas whose published tables are watched (the data API's) */
  schemas: readonly string[];
  /** REALTIME_CHANGES_RETENTION_MS: how long changes are kept for clients that come back */
  retentionMs: number;
  /** REALTIME_MAX_RECORD_BYTES: a record larger than this keeps only its small values (413) */
  maxRecordBytes: number;
  /** REALTIME_CHANGES_POLL_MS: how often the outbox is read while this instance has subscribers */
  pollMs: number;
}

interface Position {
  txid: bigint;
  id: bigint;
}

const ZERO: Position = { txid: 0n, id: 0n };
/** Rows read per statement. */
const BATCH = 500;
/** How often resume points are written, and sockets asked what they have received. */
const FLUSH_MS = 1000;
/** How often the capture triggers and the catalog are brought in line with the publication. */
const SYNC_MS = 10_000;
/** Values of at most this many bytes are kept in a record over the size limit (as on Supabase). */
const SMALL_VALUE_BYTES = 64;
/** How long a resume point outlives its subscription's last acknowledgement. */
const RESUME_POINT_MS = 24 * 60 * 60 * 1000;
const WARN_INTERVAL_MS = 60_000;

function compare(a: Position, b: Position): number {
  if (a.txid !== b.txid) return a.txid < b.txid ? -1 : 1;
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  return 0;
}

type Event = 'INSERT' | 'UPDATE' | 'DELETE' | '*';
const OPS: Record<'I' | 'U' | 'D', Exclude<Event, '*'>> = { I: 'INSERT', U: 'UPDATE', D: 'DELETE' };

interface Binding {
  id: number;
  event: Event;
  /** null: every table of the watched schemas (or of `schema`) */
  table: WatchedTable | null;
  schema: string | null;
  conditions: Condition[];
  select: string[] | null;
}

interface Subscription {
  channel: Channel;
  bindings: Binding[];
  /** the resume point's key (session, topic, bindings), or null for a caller without a session */
  key: string | null;
  holder: string;
  /** receives changes as the tail reads them; false while it is being brought up to date */
  live: boolean;
  /** while not live: the last change it was given */
  cursor: Position;
  /** live, but its client already had changes up to here (acknowledged on another instance) */
  skipThrough: Position | null;
  /** the position its client last acknowledged (a pong after the frames), and the one written */
  acked: Position | null;
  written: Position | null;
  closed: boolean;
}

interface ChangeRow {
  id: string;
  txid: string;
  captured_at: Date;
  relid: number;
  op: 'I' | 'U' | 'D';
  record: Record<string, unknown> | null;
  old_record: Record<string, unknown> | null;
}

/** A socket's resumable subscriptions and its acknowledgement in flight. */
interface SocketState {
  subscriptions: Set<Subscription>;
  inFlight: boolean;
  /** frames were sent since the last ping: only a pong can acknowledge them */
  dirty: boolean;
  /** more was sent while a ping was in flight: ask again once it answers */
  again: boolean;
  timer: NodeJS.Timeout | undefined;
}

const TAIL = `
  with x as (select pg_snapshot_xmin(pg_current_snapshot()) as xmin)
  select c.id::text, c.txid::text, c.captured_at, c.relid::int8::float8 as relid, c.op, c.record, c.old_record,
         exists (select 1 from realtime.changes h, x where h.txid >= x.xmin) as held
    from x
    left join lateral (
      select * from realtime.changes r
       where (r.txid, r.id) > ($1::xid8, $2::bigint) and r.txid < x.xmin
       order by r.txid, r.id limit $3) c on true`;

const RANGE = `
  select id::text, txid::text, captured_at, relid::int8::float8 as relid, op, record, old_record
    from realtime.changes
   where (txid, id) > ($1::xid8, $2::bigint) and (txid, id) <= ($3::xid8, $4::bigint)
   order by txid, id limit $5`;

function positionOf(row: { txid: string; id: string }): Position {
  return { txid: BigInt(row.txid), id: BigInt(row.id) };
}

function roleOf(channel: Channel): RequestRole {
  const kind = channel.caller.caller.kind;
  return kind === 'user' ? 'authenticated' : kind === 'service' ? 'service_role' : 'anon';
}

function pick(record: Record<string, unknown> | null, columns: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!record) return out;
  for (const column of columns) if (column in record) out[column] = record[column];
  return out;
}

/** Supabase's 413: a record over the limit keeps only its values of at most 64 bytes. */
function smallValues(record: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(record)) {
    if (Buffer.byteLength(JSON.stringify(value) ?? 'null') <= SMALL_VALUE_BYTES) out[column] = value;
  }
  return out;
}

export class ChangeFeed implements PostgresChanges {
  private readonly catalog: Catalog;
  private readonly subscriptions = new Map<Channel, Subscription>();
  private readonly sockets = new Map<ChannelSocket, SocketState>();
  /** the last change read and handed to live subscriptions */
  private delivered: Position = ZERO;
  private readonly turns = new ReaderTurns(() => this.tick());
  private readonly intervals: NodeJS.Timeout[] = [];
  /** the catalog's first reading: made at the first subscription, so an unused feed costs nothing */
  private ready: Promise<void> | null = null;
  /** not following the outbox: no subscription here (delivered is stale until follow()) */
  private idle = true;
  private joining = 0;
  private closed = false;
  private lastWarned = new Map<string, number>();
  private readonly pendingWrites = new Set<Promise<unknown>>();
  /** seconds between the last delivered change's capture and its delivery (for the metrics) */
  private lag = 0;

  constructor(private readonly options: ChangeFeedOptions) {
    this.catalog = new Catalog(options.pool, options.schemas);
    const every = (ms: number, run: () => Promise<void>) => {
      const handle = setInterval(() => {
        if (!this.closed && !this.options.pool.ending)
          void run().catch((error: unknown) => this.warn('timer', 'realtime: changes upkeep failed', error));
      }, ms);
      handle.unref();
      this.intervals.push(handle);
    };
    every(FLUSH_MS, () => this.flush());
    every(SYNC_MS, async () => {
      if (this.subscriptions.size === 0) return;
      await this.catalog.refresh().catch(async (error: unknown) => {
        this.warn(
          'sync',
          'realtime: the capture triggers could not be brought in line with the publication',
          error,
        );
        await this.catalog.refresh(false);
      });
    });
    // Retention holds whether or not anyone is subscribed here.
    every(Math.max(1000, Math.min(30_000, Math.floor(options.retentionMs / 2))), () => this.prune());
  }

  scopeColumn(schema: string, table: string): string | null | undefined {
    return this.catalog.named(schema, table)?.scope;
  }

  /** How far behind the changes delivered last were, in seconds. */
  lagSeconds(): number {
    return this.lag;
  }

  private async start(): Promise<void> {
    // At the first subscription: the capture triggers in line with the publication, the tables read.
    try {
      await this.catalog.refresh();
    } catch (error) {
      this.warn(
        'sync',
        'realtime: the capture triggers could not be brought in line with the publication',
        error,
      );
      await this.catalog.refresh(false);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Joining and leaving
  // ---------------------------------------------------------------------------------------------

  async subscribe(channel: Channel, bindings: PostgresBinding[]): Promise<PostgresChangesAnswer> {
    this.joining += 1;
    try {
      return await this.join(channel, bindings);
    } finally {
      this.joining -= 1;
    }
  }

  /**
   * An instance with no subscription does not read the outbox (no statement at all while idle);
   * the first subscription after that starts it at the newest change every transaction is past.
   */
  private async follow(): Promise<void> {
    if (!this.idle) return;
    await this.turns.run(async () => {
      if (!this.idle) return;
      const { rows } = await this.options.pool.query<{ txid: string; id: string }>(
        `select txid::text, id::text from realtime.changes
          where txid < pg_snapshot_xmin(pg_current_snapshot()) order by txid desc, id desc limit 1`,
      );
      this.delivered = rows[0] ? positionOf(rows[0]) : ZERO;
      this.idle = false;
      this.turns.schedule(0);
    });
  }

  private async join(channel: Channel, bindings: PostgresBinding[]): Promise<PostgresChangesAnswer> {
    const answered = bindings.map((binding) => ({ ...binding, id: bindingId(binding) }));
    if (bindings.length === 0) return { bindings: answered, system: [] };
    try {
      // A failed start is tried again by the next subscription.
      this.ready ??= this.start().catch((error: unknown) => {
        this.ready = null;
        throw error;
      });
      await this.ready;
      await this.follow();
    } catch (error) {
      this.options.logger.error({ err: error }, 'realtime: postgres_changes could not start');
      return {
        bindings: answered,
        system: [{ status: 'error', message: 'Unable to connect to the database' }],
      };
    }
    // A table just added to the publication may not be known yet.
    for (const binding of bindings) {
      if (binding.table !== undefined && binding.table !== '*' && binding.schema !== '*') {
        await this.catalog.lookup(binding.schema, binding.table);
      }
    }
    let parsed: Binding[];
    try {
      parsed = bindings.map((binding, index) => this.parseBinding(binding, answered[index]!.id));
    } catch (error) {
      if (!(error instanceof SubscribeError)) throw error;
      return { bindings: answered, system: [{ status: 'error', message: error.message }] };
    }
    const subscription: Subscription = {
      channel,
      bindings: parsed,
      key: this.resumeKey(channel, bindings),
      holder: randomUUID(),
      live: false,
      cursor: this.delivered,
      skipThrough: null,
      acked: null,
      written: null,
      closed: false,
    };
    const system: PostgresChangesAnswer['system'] = [{ status: 'ok', message: 'Subscribed to PostgreSQL' }];
    if (subscription.key) {
      const resumed = await this.takeResumePoint(subscription.key, subscription.holder, this.delivered);
      if (resumed.lost) {
        system.push({
          status: 'error',
          message: `Changes were missed: this subscription was away longer than changes are kept (${Math.round(this.options.retentionMs / 1000)} s); fetch the rows again`,
        });
      } else {
        subscription.cursor = resumed.position;
      }
    }
    this.unsubscribe(channel);
    this.subscriptions.set(channel, subscription);
    if (subscription.key) {
      let state = this.sockets.get(channel.socket);
      if (!state) {
        state = { subscriptions: new Set(), inFlight: false, dirty: false, again: false, timer: undefined };
        this.sockets.set(channel.socket, state);
      }
      state.subscriptions.add(subscription);
    }
    return { bindings: answered, system, start: () => void this.catchUp(subscription) };
  }

  unsubscribe(channel: Channel): void {
    const subscription = this.subscriptions.get(channel);
    if (!subscription) return;
    this.subscriptions.delete(channel);
    subscription.closed = true;
    const state = this.sockets.get(channel.socket);
    if (state?.subscriptions.delete(subscription) && state.subscriptions.size === 0) {
      clearTimeout(state.timer);
      this.sockets.delete(channel.socket);
    }
    if (subscription.key) {
      // Released where its client last acknowledged; what was sent after that is sent again.
      const at = subscription.acked;
      this.track(
        this.options.pool.query(
          `update realtime.resume_points
              set holder = null, updated_at = now(),
                  txid = coalesce($3::xid8, txid), change_id = coalesce($4::bigint, change_id)
            where key = $1 and holder = $2`,
          [subscription.key, subscription.holder, at ? String(at.txid) : null, at ? String(at.id) : null],
        ),
      );
    }
  }

  private parseBinding(binding: PostgresBinding, id: number): Binding {
    const upper = binding.event.toUpperCase();
    const event: Event = upper === 'INSERT' || upper === 'UPDATE' || upper === 'DELETE' ? upper : '*';
    const schema = binding.schema === '*' ? null : binding.schema;
    const tableName = binding.table === undefined || binding.table === '*' ? null : binding.table;
    const unable = () =>
      new SubscribeError(
        `Unable to subscribe to changes with given parameters. Please check Realtime is enabled for the given connect parameters: [event: ${upper}, schema: ${binding.schema}, table: ${binding.table ?? '*'}, filters: [${binding.filter ?? ''}]]`,
      );
    if (schema !== null && !this.options.schemas.includes(schema)) throw unable();
    if (tableName === null) {
      if ((binding.filter ?? '').trim() !== '' || (binding.select !== undefined && binding.select !== null)) {
        throw new SubscribeError(
          'Error parsing `filter` params: filters and select need one table, not a wildcard',
        );
      }
      return { id, event, table: null, schema, conditions: [], select: null };
    }
    const table = this.catalog.named(schema ?? 'public', tableName);
    if (!table || schema === null) throw unable();
    try {
      return {
        id,
        event,
        table,
        schema,
        conditions: parseFilter(binding.filter, table.types),
        select: parseSelect(binding.select, table.types),
      };
    } catch (error) {
      if (error instanceof FilterError)
        throw new SubscribeError(`Error parsing \`filter\` params: ${error.message}`);
      throw error;
    }
  }

  /** Session + topic + bindings: what realtime-js sends again, unchanged, when it rejoins. */
  private resumeKey(channel: Channel, bindings: PostgresBinding[]): string | null {
    const caller = channel.caller.caller;
    if (caller.kind !== 'user' || typeof caller.claims.session_id !== 'string') return null;
    const canonical = bindings.map((b) =>
      Object.keys(b)
        .sort()
        .map((k) => [k, b[k]]),
    );
    return createHash('sha256')
      .update(JSON.stringify([caller.claims.session_id, channel.topic, channel.private, canonical]))
      .digest('base64url');
  }

  /**
   * Takes the resume point (a later join of the same key takes it from an earlier one, which may
   * be a socket the server has not yet seen die). A new one starts at `now`.
   */
  private async takeResumePoint(
    key: string,
    holder: string,
    now: Position,
  ): Promise<{ position: Position; lost: boolean }> {
    const { rows } = await this.options.pool.query<{
      txid: string;
      id: string;
      horizon_txid: string;
      horizon_id: string;
    }>(
      `with up as (
         insert into realtime.resume_points as r (key, txid, change_id, holder, updated_at)
         values ($1, $2::xid8, $3::bigint, $4, now())
         on conflict (key) do update set holder = excluded.holder, updated_at = now()
         returning r.txid, r.change_id)
       select up.txid::text, up.change_id::text as id,
              h.txid::text as horizon_txid, h.change_id::text as horizon_id
         from up, realtime.change_horizon h`,
      [key, String(now.txid), String(now.id), holder],
    );
    const row = rows[0]!;
    const position = positionOf(row);
    const horizon = { txid: BigInt(row.horizon_txid), id: BigInt(row.horizon_id) };
    if (compare(position, horizon) < 0) {
      await this.options.pool.query(
        'update realtime.resume_points set txid = $2::xid8, change_id = $3::bigint where key = $1 and holder = $4',
        [key, String(now.txid), String(now.id), holder],
      );
      return { position: now, lost: true };
    }
    return { position, lost: false };
  }

  /** Gives a subscription what it missed (from its cursor up to the tail), then makes it live. */
  private async catchUp(subscription: Subscription): Promise<void> {
    try {
      // Most of the way outside the tail's turn, so a long replay does not hold up the others.
      for (;;) {
        if (subscription.closed) return;
        const got = await this.replayPage(subscription);
        if (got < BATCH) break;
      }
      await this.turns.run(async () => {
        while (!subscription.closed && (await this.replayPage(subscription)) === BATCH);
        if (subscription.closed) return;
        // A resume point ahead of this instance's reader: what lies before it was read already.
        if (compare(subscription.cursor, this.delivered) > 0) subscription.skipThrough = subscription.cursor;
        subscription.live = true;
      });
    } catch (error) {
      this.warn('replay', 'realtime: replaying changes to a subscription failed', error);
      if (!subscription.closed) subscription.live = true;
    }
  }

  private async replayPage(subscription: Subscription): Promise<number> {
    const to = this.delivered;
    if (compare(subscription.cursor, to) >= 0) return 0;
    const { rows } = await this.options.pool.query<ChangeRow>(RANGE, [
      String(subscription.cursor.txid),
      String(subscription.cursor.id),
      String(to.txid),
      String(to.id),
      BATCH,
    ]);
    if (subscription.closed) return 0;
    await this.dispatch(rows, [subscription]);
    subscription.cursor = rows.length === BATCH ? positionOf(rows[rows.length - 1]!) : to;
    if (rows.length > 0) this.askForAcknowledgements();
    return rows.length;
  }

  // ---------------------------------------------------------------------------------------------
  // The tail
  // ---------------------------------------------------------------------------------------------

  private async tick(): Promise<void> {
    if (this.closed || this.options.pool.ending) return;
    if (this.subscriptions.size === 0 && this.joining === 0) {
      this.idle = true;
      return;
    }
    if (this.idle) return;
    let next = this.options.pollMs;
    try {
      const { rows } = await this.options.pool.query<ChangeRow & { held: boolean }>(TAIL, [
        String(this.delivered.txid),
        String(this.delivered.id),
        BATCH,
      ]);
      const changes = rows.filter((row) => row.id !== null);
      if (changes.length > 0) {
        const live = [...this.subscriptions.values()].filter((s) => s.live);
        await this.dispatch(changes, live);
        const last = changes[changes.length - 1]!;
        this.lag = Math.max(0, (Date.now() - new Date(last.captured_at).getTime()) / 1000);
        this.delivered = positionOf(last);
        this.askForAcknowledgements();
      }
      // A full batch: more is waiting. Committed changes held back behind a transaction still
      // running: look again soon, they are released when it ends.
      if (changes.length === BATCH) next = 0;
      else if (rows[0]?.held) next = Math.min(next, 20);
    } catch (error) {
      this.warn('tail', 'realtime: reading changes failed; retrying', error);
      next = Math.max(next, 1000);
    }
    this.turns.schedule(next);
  }

  // ---------------------------------------------------------------------------------------------
  // Who receives what
  // ---------------------------------------------------------------------------------------------

  /** Sends each change, in order, to the subscriptions that match it and may read it. */
  private async dispatch(rows: ChangeRow[], subscriptions: Subscription[]): Promise<void> {
    if (subscriptions.length === 0) return;
    interface Target {
      subscription: Subscription;
      ids: number[];
    }
    const plans: { row: ChangeRow; table: WatchedTable; targets: Target[] }[] = [];
    let memberships: Map<string, Set<string>> | undefined;
    for (const row of rows) {
      const table = this.catalog.byId(row.relid) ?? (await this.catalog.missed(row.relid));
      if (!table || !table.publishes[row.op]) continue;
      const event = OPS[row.op];
      const image = row.op === 'D' ? pick(row.old_record, table.identity) : (row.record ?? {});
      // A scoped table's change is offered only to members of the row's workspace.
      let workspace: string | null = null;
      if (table.scope) {
        memberships ??= await this.memberships(subscriptions);
        const value = (row.op === 'D' ? row.old_record : row.record)?.[table.scope];
        workspace = typeof value === 'string' ? value : '';
      }
      const targets: Target[] = [];
      const position = positionOf(row);
      for (const subscription of subscriptions) {
        if (subscription.skipThrough) {
          if (compare(position, subscription.skipThrough) <= 0) continue;
          subscription.skipThrough = null;
        }
        if (workspace !== null && roleOf(subscription.channel) !== 'service_role') {
          const caller = subscription.channel.caller.caller;
          if (caller.kind !== 'user' || !memberships?.get(caller.claims.sub)?.has(workspace)) continue;
        }
        const ids: number[] = [];
        for (const binding of subscription.bindings) {
          if (binding.event !== '*' && binding.event !== event) continue;
          if (
            binding.table
              ? binding.table.relid !== table.relid
              : binding.schema !== null && binding.schema !== table.schema
          )
            continue;
          if (!passes(binding.conditions, image, table.types)) continue;
          ids.push(binding.id);
        }
        if (ids.length > 0) targets.push({ subscription, ids });
      }
      if (targets.length > 0) plans.push({ row, table, targets });
    }
    if (plans.length === 0) return;
    const visible = await this.rowLevelSecurity(plans);
    const payloads = new Map<string, string>();
    for (const [index, plan] of plans.entries()) {
      for (const { subscription, ids } of plan.targets) {
        if (subscription.closed) continue;
        const channel = subscription.channel;
        const role = roleOf(channel);
        const check = visible.get(index);
        if (check && role !== 'service_role' && canReadKey(plan.table, role) && !check.has(groupKey(channel)))
          continue;
        const selectKey = subscription.bindings.find((b) => b.id === ids[0])?.select ?? null;
        const key = `${role}|${selectKey ? selectKey.join(',') : ''}`;
        let data = payloads.get(key);
        if (data === undefined) {
          data = JSON.stringify(this.payload(plan.row, plan.table, role, selectKey));
          payloads.set(key, data);
        }
        channel.socket.sendFrame(frameOf(channel, ids, data));
        const state = this.sockets.get(channel.socket);
        if (state) state.dirty = true;
      }
      payloads.clear();
    }
  }

  /** The workspaces of the users behind these subscriptions, for scoped tables. */
  private async memberships(subscriptions: Subscription[]): Promise<Map<string, Set<string>>> {
    const users = new Set<string>();
    for (const s of subscriptions) {
      const caller = s.channel.caller.caller;
      if (caller.kind === 'user') users.add(caller.claims.sub);
    }
    const result = new Map<string, Set<string>>();
    if (users.size === 0) return result;
    const { rows } = await this.options.pool.query<{ user_id: string; workspace_ids: string[] }>(
      'select user_id, workspace_ids::text[] from realtime.memberships($1::uuid[])',
      [[...users]],
    );
    for (const row of rows) result.set(row.user_id, new Set(row.workspace_ids));
    return result;
  }

  /**
   * For each plan (by index) of a table under row-level security, the groups (role + claims) that
   * may read its row as the change left it; plans absent from the map need no check (no RLS, or
   * only the service role). One statement per table for the whole batch.
   */
  private async rowLevelSecurity(
    plans: { row: ChangeRow; table: WatchedTable; targets: { subscription: Subscription }[] }[],
  ): Promise<Map<number, Set<string>>> {
    const result = new Map<number, Set<string>>();
    const byTable = new Map<
      number,
      { table: WatchedTable; plans: number[]; groups: Map<string, { channel: Channel; images: number[] }> }
    >();
    for (const [index, plan] of plans.entries()) {
      // Without a primary key, or for a role that may not read it, the payload is an error.
      if (!plan.table.rls || plan.table.primaryKey.length === 0) continue;
      result.set(index, new Set());
      let entry = byTable.get(plan.table.relid);
      if (!entry) {
        entry = { table: plan.table, plans: [], groups: new Map() };
        byTable.set(plan.table.relid, entry);
      }
      entry.plans.push(index);
      const ordinal = entry.plans.length;
      for (const { subscription } of plan.targets) {
        const role = roleOf(subscription.channel);
        if (role === 'service_role' || !canReadKey(plan.table, role)) continue;
        // Each group is checked against the changes it is a candidate for, and only those.
        const key = groupKey(subscription.channel);
        let group = entry.groups.get(key);
        if (!group) {
          group = { channel: subscription.channel, images: [] };
          entry.groups.set(key, group);
        }
        if (group.images[group.images.length - 1] !== ordinal) group.images.push(ordinal);
      }
    }
    for (const { table, plans: indexes, groups } of byTable.values()) {
      if (groups.size === 0) continue;
      const keys = [...groups.keys()];
      const images = indexes.map((i) => {
        const row = plans[i]!.row;
        return row.op === 'D' ? row.old_record : row.record;
      });
      const groupList = keys.map((k) => {
        const { channel, images: ordinals } = groups.get(k)!;
        return { role: roleOf(channel), claims: channel.caller.caller.claims, images: ordinals };
      });
      try {
        const { rows } = await this.options.pool.query<{
          group_index: number;
          image_index: number;
          error: string | null;
        }>(
          'select group_index, image_index, error from realtime.visible_images($1::oid::regclass, $2::jsonb, $3::jsonb)',
          [table.relid, JSON.stringify(images), JSON.stringify(groupList)],
        );
        for (const row of rows) {
          if (row.image_index === 0) {
            // This group's policy (or its session) failed: it receives nothing, the rest go on.
            this.warn(
              `rls:${table.relid}:${row.error ?? ''}`,
              `realtime: checking row-level security on ${table.schema}.${table.table} for a subscriber failed: ${row.error ?? 'unknown error'}`,
            );
            continue;
          }
          result.get(indexes[row.image_index - 1]!)?.add(keys[row.group_index - 1]!);
        }
      } catch (error) {
        this.warn(
          `rlsall:${table.relid}`,
          `realtime: checking row-level security on ${table.schema}.${table.table} failed`,
          error,
        );
      }
    }
    return result;
  }

  /** Supabase's payload for one change as one role (and column list) may see it. */
  private payload(row: ChangeRow, table: WatchedTable, role: RequestRole, select: string[] | null) {
    const type = OPS[row.op];
    const visibleColumns = table.columns.filter(
      (c) =>
        c.selectable[role] &&
        (select === null || select.includes(c.name) || table.primaryKey.includes(c.name)),
    );
    const names = visibleColumns.map((c) => c.name);
    const base = {
      schema: table.schema,
      table: table.table,
      commit_timestamp: new Date(row.captured_at).toISOString(),
      type,
      columns: visibleColumns.map((c) => ({ name: c.name, type: c.type })),
    };
    if (table.primaryKey.length === 0) {
      return { ...base, record: {}, old_record: {}, errors: ['Error 400: Bad Request, no primary key'] };
    }
    if (!canReadKey(table, role)) {
      return { ...base, record: {}, old_record: {}, errors: ['Error 401: Unauthorized'] };
    }
    let record = row.op === 'D' ? {} : pick(row.record, names);
    // On a table under row-level security, a DELETE's old record is its primary key only.
    const oldColumns = row.op === 'D' && table.rls ? table.primaryKey : table.identity;
    let oldRecord =
      row.op === 'I'
        ? {}
        : pick(
            row.old_record,
            oldColumns.filter((c) => names.includes(c)),
          );
    let errors: string[] | null = null;
    if (Buffer.byteLength(JSON.stringify(record)) > this.options.maxRecordBytes) {
      record = smallValues(record);
      errors = ['Error 413: Payload Too Large'];
    }
    if (Buffer.byteLength(JSON.stringify(oldRecord)) > this.options.maxRecordBytes) {
      oldRecord = smallValues(oldRecord);
      errors = ['Error 413: Payload Too Large'];
    }
    return { ...base, record, old_record: oldRecord, errors };
  }

  // ---------------------------------------------------------------------------------------------
  // Acknowledgements, resume points, retention
  // ---------------------------------------------------------------------------------------------

  /**
   * Asks each socket with resumable subscriptions that was sent changes to acknowledge them: a
   * ping, whose pong proves every frame sent before it was read. One ping in flight per socket;
   * what is sent meanwhile is asked about when it answers (and at least 100 ms later). A socket
   * with nothing unacknowledged is at the reader's position without being asked.
   */
  private askForAcknowledgements(): void {
    for (const [socket, state] of this.sockets) {
      if (!state.dirty && !state.inFlight && !state.timer) {
        // Nothing unacknowledged was sent to it: it has read all that was meant for it so far.
        for (const subscription of state.subscriptions)
          this.acknowledge(subscription, this.positionOf(subscription));
        continue;
      }
      if (!state.dirty) continue;
      if (state.inFlight || state.timer) {
        state.again = true;
        continue;
      }
      this.ping(socket, state);
    }
  }

  private positionOf(subscription: Subscription): Position {
    return subscription.live ? this.delivered : subscription.cursor;
  }

  private acknowledge(subscription: Subscription, position: Position): void {
    if (!subscription.acked || compare(position, subscription.acked) > 0) subscription.acked = position;
  }

  private ping(socket: ChannelSocket, state: SocketState): void {
    state.inFlight = true;
    state.again = false;
    state.dirty = false;
    const at = [...state.subscriptions].map((s) => [s, this.positionOf(s)] as const);
    socket.ping(() => {
      state.inFlight = false;
      for (const [subscription, position] of at) this.acknowledge(subscription, position);
      if (state.again && state.dirty && this.sockets.get(socket) === state) {
        state.timer = setTimeout(() => {
          state.timer = undefined;
          if (this.sockets.get(socket) === state && !this.closed) this.ping(socket, state);
        }, 100);
        state.timer.unref();
      }
    });
  }

  /** Writes the acknowledged positions of this instance's subscriptions that moved. */
  private async flush(): Promise<void> {
    const live = [...this.subscriptions.values()].filter((s) => s.key);
    // Sockets that were sent nothing lately are still at the tail: ask them too.
    this.askForAcknowledgements();
    const moved = live.filter((s) => s.acked && (!s.written || compare(s.acked, s.written) > 0));
    if (moved.length === 0) return;
    await this.options.pool.query(
      `update realtime.resume_points r
          set txid = u.txid::xid8, change_id = u.id::bigint, updated_at = now()
         from unnest($1::text[], $2::text[], $3::text[], $4::uuid[]) as u(key, txid, id, holder)
        where r.key = u.key and r.holder = u.holder`,
      [
        moved.map((s) => s.key),
        moved.map((s) => String(s.acked!.txid)),
        moved.map((s) => String(s.acked!.id)),
        moved.map((s) => s.holder),
      ],
    );
    for (const s of moved) s.written = s.acked;
  }

  /** Deletes changes past the retention window (never one a reader could still be behind). */
  private async prune(): Promise<void> {
    await this.options.pool.query(
      `with gone as (
         delete from realtime.changes where (txid, id) in (
           select txid, id from realtime.changes
            where captured_at < now() - make_interval(secs => $1::float8 / 1000)
              and txid < pg_snapshot_xmin(pg_current_snapshot())
            order by txid, id limit 10000)
         returning txid, id),
       newest as (select txid, id from gone order by txid desc, id desc limit 1),
       horizon as (
         update realtime.change_horizon h set txid = newest.txid, change_id = newest.id
           from newest where (newest.txid, newest.id) > (h.txid, h.change_id))
       delete from realtime.resume_points
        where updated_at < now() - make_interval(secs => $2::float8 / 1000)`,
      [this.options.retentionMs, this.options.retentionMs + RESUME_POINT_MS],
    );
  }

  private track(write: Promise<unknown>): void {
    const tracked = write.catch((error: unknown) =>
      this.warn('resume', 'realtime: writing a resume point failed', error),
    );
    this.pendingWrites.add(tracked);
    void tracked.finally(() => this.pendingWrites.delete(tracked));
  }

  /** Stops tailing once the subscriptions' last positions are written. */
  async close(): Promise<void> {
    if (this.closed) return;
    for (const channel of [...this.subscriptions.keys()]) this.unsubscribe(channel);
    this.closed = true;
    for (const handle of this.intervals) clearInterval(handle);
    await Promise.all([...this.pendingWrites]);
    await this.turns.stop();
  }

  private warn(kind: string, message: string, error?: unknown): void {
    const now = Date.now();
    if (now - (this.lastWarned.get(kind) ?? 0) < WARN_INTERVAL_MS) return;
    if (this.lastWarned.size > 1000) this.lastWarned = new Map();
    this.lastWarned.set(kind, now);
    this.options.logger.warn(error ? { err: error } : {}, message);
  }
}

class SubscribeError extends Error {
  override name = 'SubscribeError';
}

/** Whether the role may select every primary key column (else Supabase's 401 payload). */
function canReadKey(table: WatchedTable, role: RequestRole): boolean {
  return table.primaryKey.every((c) => table.columns.find((col) => col.name === c)?.selectable[role]);
}

/** Subscribers with the same role and claims see the same rows: one check serves them all. */
function groupKey(channel: Channel): string {
  const caller = channel.caller.caller;
  return `${caller.claims.role}\u0000${JSON.stringify(caller.claims)}`;
}

function frameOf(channel: Channel, ids: number[], data: string): string {
  const payload = `{"ids":${JSON.stringify(ids)},"data":${data}}`;
  const topic = JSON.stringify(channel.topic);
  if (channel.socket.vsn === '2.0.0') return `[null,null,${topic},"postgres_changes",${payload}]`;
  return `{"topic":${topic},"event":"postgres_changes","payload":${payload},"ref":null,"join_ref":null}`;
}
