// In charge of broadcasts stored in realtime.messages (realtime.send, realtime.broadcast_changes;
// decision 0084): every instance with subscribers reads them itself, in (txid, seq) order and only
// past transactions that have all ended, and delivers each to its topic's channels here (on a
// private topic, only to those whose policies let them read broadcasts), with its id as meta.id;
// a join asking for a replay gets the stored ones first (replay.ts). It also deletes messages
// older than the retention window, whether or not anyone is subscribed.
import type { Pool } from '../db/pool.js';
import type { Logger } from '../logger.js';
import { encodeBroadcast, type BroadcastBody, type Vsn } from './protocol.js';
import type { Replay } from './replay.js';
import { topicKey, type Channel, type Topics } from './topics.js';
import { ReaderTurns } from './reader-turns.js';

/** Messages read per statement; a full batch is followed at once by the next. */
const BATCH = 500;
/** Messages deleted per statement; the next run goes on where this one stopped. */
const PRUNE_BATCH = 10_000;
/** While committed messages wait behind a running transaction, look again this soon. */
const HELD_POLL_MS = 20;
const WARN_INTERVAL_MS = 60_000;
/** Past every position: a replay takes whatever is committed when it runs. */
const END: Position = { txid: '18446744073709551615', seq: '9223372036854775807' };

export interface StoredBroadcastsOptions {
  pool: Pool;
  logger: Logger;
  topics: Topics;
  /** how often an instance with subscribers reads new messages */
  pollMs: number;
  /** messages older than this are deleted */
  retentionMs: number;
}

interface Position {
  txid: string;
  seq: string;
}

/** A PostgreSQL snapshot (pg_current_snapshot()): which transactions had committed when it was taken. */
interface Snapshot {
  xmin: bigint;
  xmax: bigint;
  running: Set<bigint>;
}

function parseSnapshot(text: string): Snapshot {
  const [xmin = '0', xmax = '0', running = ''] = text.split(':');
  return {
    xmin: BigInt(xmin),
    xmax: BigInt(xmax),
    running: new Set(running === '' ? [] : running.split(',').map((x) => BigInt(x))),
  };
}

/** Whether the transaction had committed (or ended) when the snapshot was taken. */
function before(txid: bigint, snapshot: Snapshot): boolean {
  return txid < snapshot.xmin || (txid < snapshot.xmax && !snapshot.running.has(txid));
}

interface MessageRow {
  id: string;
  topic: string;
  private: boolean | null;
  event: string | null;
  payload: unknown;
  binary_payload: Buffer | null;
}

function bodyOf(row: { payload: unknown; binary_payload: Buffer | null }): BroadcastBody {
  return row.binary_payload !== null
    ? { kind: 'binary', bytes: row.binary_payload }
    : { kind: 'json', value: row.payload ?? null };
}

/** Sends one stored message to one channel, encoded once per framing across its channels. */
function sendTo(
  channel: Channel,
  frames: Map<Vsn, string | Buffer | null>,
  encode: (vsn: Vsn) => string | Buffer | null,
): boolean {
  const vsn = channel.socket.vsn;
  let frame = frames.get(vsn);
  if (frame === undefined) {
    frame = encode(vsn);
    frames.set(vsn, frame);
  }
  // A 1.0.0 socket cannot receive bytes, as on Supabase.
  if (frame === null) return false;
  channel.socket.sendFrame(frame);
  return true;
}

export class StoredBroadcasts {
  /** the last message read; null while idle (no channel here: no statement at all) */
  private cursor: Position | null = null;
  /** channels whose replay has not been sent yet: live messages wait until it has */
  private readonly replaying = new WeakSet<Channel>();
  /**
   * What had committed when a channel joined (or was replayed to): those messages are not live for
   * it, whatever the reader's position. Forgotten once the reader is past the snapshot.
   */
  private readonly joinedAt = new WeakMap<Channel, Snapshot>();
  private readonly turns = new ReaderTurns(() => this.tick());
  private readonly pruner: NodeJS.Timeout;
  private closed = false;
  private lastWarned = new Map<string, number>();
  /** frames handed to sockets, for the metrics */
  sent = 0;

  constructor(private readonly options: StoredBroadcastsOptions) {
    // Retention holds whether or not anyone is subscribed here.
    this.pruner = setInterval(
      () => {
        if (!this.closed && !options.pool.ending)
          void this.prune().catch((error: unknown) =>
            this.warn('prune', 'realtime: deleting old messages failed', error),
          );
      },
      Math.max(1000, Math.min(30_000, Math.floor(options.retentionMs / 2))),
    );
    this.pruner.unref();
  }

  /**
   * At a join, before it is answered: the instance follows the messages from here on (so nothing
   * committed after the answer is missed), and a channel asking for a replay hears no live message
   * before it. Returns what to run once the join is answered: the replay, then live messages.
   */
  async attach(channel: Channel, replay: Replay | null): Promise<() => void> {
    if (replay) this.replaying.add(channel);
    try {
      await this.follow();
      const { rows } = await this.options.pool.query<{ snapshot: string }>(
        'select pg_current_snapshot()::text as snapshot',
      );
      this.joinedAt.set(channel, parseSnapshot(rows[0]!.snapshot));
    } catch (error) {
      this.warn('tail', 'realtime: reading stored messages failed; retrying', error);
    }
    return () => {
      if (!replay) return;
      void this.turns
        .run(() => this.replay(channel, replay))
        .catch((error: unknown) => {
          this.replaying.delete(channel);
          this.warn('replay', 'realtime: replaying stored messages failed', error);
        });
    };
  }

  /** Deletes messages past the retention window, a batch per call; returns how many. */
  async prune(): Promise<number> {
    const { rows } = await this.options.pool.query<{ gone: number }>(
      'select realtime.prune_messages($1, $2) as gone',
      [this.options.retentionMs, PRUNE_BATCH],
    );
    return rows[0]?.gone ?? 0;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.pruner);
    await this.turns.stop();
  }

  /** Starts reading (at the newest message every transaction is past) unless already reading. */
  private async follow(): Promise<void> {
    if (this.cursor !== null) return;
    await this.turns.run(async () => {
      if (this.cursor !== null) return;
      const { rows } = await this.options.pool.query<Position>(
        'select txid::text, seq::text from realtime.messages_tail()',
      );
      this.cursor = rows[0] ?? { txid: '0', seq: '0' };
      this.turns.schedule(this.options.pollMs);
    });
  }

  private async tick(): Promise<void> {
    if (this.closed || this.options.pool.ending || this.cursor === null) return;
    // Nobody joined here: stop reading until the next join (which starts again from the tail).
    if (this.options.topics.size() === 0) {
      this.cursor = null;
      return;
    }
    let next = this.options.pollMs;
    try {
      const { rows } = await this.options.pool.query<MessageRow & Position & { held: boolean }>(
        `select id, txid::text, seq::text, topic, private, event, payload, binary_payload, held
           from realtime.messages_after($1::xid8, $2::bigint, $3)`,
        [this.cursor.txid, this.cursor.seq, BATCH],
      );
      const messages = rows.filter((row) => row.id !== null);
      for (const message of messages) this.deliver(message);
      const last = messages[messages.length - 1];
      if (last) this.cursor = { txid: last.txid, seq: last.seq };
      if (messages.length === BATCH) next = 0;
      else if (rows[0]?.held) next = Math.min(next, HELD_POLL_MS);
    } catch (error) {
      this.warn('tail', 'realtime: reading stored messages failed; retrying', error);
      next = Math.max(next, 1000);
    }
    this.turns.schedule(next);
  }

  /** Sends a message to its topic's channels here, at once (in the order it was read). */
  private deliver(row: MessageRow & Position): void {
    const topic = `realtime:${row.topic}`;
    const isPrivate = row.private === true;
    const members = this.options.topics.members(topicKey(isPrivate, topic));
    if (members.size === 0) return;
    const event = row.event ?? '';
    const body = bodyOf(row);
    const meta = { id: row.id };
    const frames = new Map<Vsn, string | Buffer | null>();
    const encode = (vsn: Vsn) => encodeBroadcast(topic, event, body, meta, vsn);
    const txid = BigInt(row.txid);
    for (const channel of members) {
      if (this.replaying.has(channel)) continue;
      const joined = this.joinedAt.get(channel);
      if (joined) {
        // Committed before the join (or replayed): not live for this channel.
        if (before(txid, joined)) continue;
        if (txid >= joined.xmax) this.joinedAt.delete(channel);
      }
      if (channel.private && !channel.permissions.readBroadcast) continue;
      if (sendTo(channel, frames, encode)) this.sent += 1;
    }
  }

  /**
   * The channel's replay: its topic's newest `limit` stored messages since `since`, oldest first,
   * marked replayed, as committed when it runs; only what commits after that reaches the channel
   * live (its snapshot replaces the join's), so nothing arrives twice or before the replay.
   */
  private async replay(channel: Channel, replay: Replay): Promise<void> {
    try {
      if (!channel.private || !channel.permissions.readBroadcast) return;
      // One statement: the snapshot is the one the replayed rows were read in.
      const { rows } = await this.options.pool.query<MessageRow & { snapshot: string }>(
        `with s as (select pg_current_snapshot()::text as snapshot)
         select s.snapshot, r.id, r.event, r.payload, r.binary_payload
           from s left join lateral realtime.replay_messages($1, $2, $3::xid8, $4::bigint, $5)
                with ordinality r (id, event, payload, binary_payload, n) on true
          order by r.n`,
        [channel.name, replay.since, END.txid, END.seq, replay.limit],
      );
      this.joinedAt.set(channel, parseSnapshot(rows[0]!.snapshot));
      for (const row of rows) {
        if (row.id === null) continue;
        const event = row.event ?? '';
        const body = bodyOf(row);
        const meta = { id: row.id, replayed: true };
        sendTo(channel, new Map(), (vsn) => encodeBroadcast(channel.topic, event, body, meta, vsn));
        this.sent += 1;
      }
    } finally {
      this.replaying.delete(channel);
    }
  }

  private warn(kind: string, message: string, error?: unknown): void {
    const now = Date.now();
    if (now - (this.lastWarned.get(kind) ?? 0) < WARN_INTERVAL_MS) return;
    this.lastWarned.set(kind, now);
    this.options.logger.warn(error ? { err: error } : {}, message);
  }
}
