// In charge of carrying broadcasts between instances through PostgreSQL, so clients connected to
// different instances behind a load balancer hear each other: each instance LISTENs on one
// channel and NOTIFYs what its own clients (and its REST endpoint) broadcast. A NOTIFY payload
// holds at most 8000 bytes, so a broadcast travels as numbered chunks sent in one statement (one
// transaction: delivered together) and is put back together by whoever receives it. Sending is
// batched and one statement at a time, so relaying costs at most one pool connection however
// busy the sockets are; past a bound, broadcasts stay on their own instance and that is logged.
// Any database role may NOTIFY any channel, so every relayed broadcast is signed with a key
// derived from JWT_SECRET, which the instances share: one that does not verify is ignored, and a
// role that can run SQL cannot speak into a private channel this way.
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import pg from 'pg';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../logger.js';
import type { Broadcast } from './broadcast.js';

const CHANNEL = 'tenantry_realtime';
/** Characters of one chunk's data: with its envelope, well under NOTIFY's 8000 bytes. */
const CHUNK_CHARS = 7000;
/** Chunks waiting to be sent; past this, broadcasts are not relayed until the queue drains. */
const MAX_QUEUED_CHUNKS = 20_000;
/** A broadcast whose chunks have not all arrived by then is given up. */
const ASSEMBLY_TIMEOUT_MS = 10_000;
const MAX_ASSEMBLIES = 1000;
const LISTEN_RETRY_MS = 2000;
const WARN_INTERVAL_MS = 60_000;

/** How this instance hears other instances: LISTEN to the pool's database, to a direct URL, or not at all. */
export type RelayWatch = { kind: 'listen'; url?: string } | { kind: 'off' };

/** Presence between instances: a channel's tracked state, or an instance's liveness. */
export type PresenceWire =
  | { t: 'p'; op: 'track'; key: string; id: string; pkey: string; meta: Record<string, unknown> }
  | { t: 'p'; op: 'untrack'; key: string; id: string }
  | { t: 'p'; op: 'alive' | 'hello' | 'bye' };

interface Wire {
  t?: undefined;
  key: string;
  topic: string;
  private: boolean;
  event: string;
  json?: unknown;
  bytes?: string;
  meta?: Record<string, unknown>;
}

interface Assembly {
  parts: (string | undefined)[];
  got: number;
  started: number;
}

export class Relay {
  readonly instance = randomUUID();
  private queue: string[] = [];
  private sending = false;
  private listener: pg.Client | undefined;
  private closed = false;
  private lastWarned = 0;
  private readonly assemblies = new Map<string, Assembly>();
  private sequence = 0;
  private readonly watchdog: NodeJS.Timeout;

  private readonly key: Buffer;
  /** told of another instance's presence messages, with the instance's id */
  onPresence: (message: PresenceWire, instance: string) => void = () => undefined;
  /** told each time the relay starts listening (again): what was sent meanwhile was missed */
  onListening: () => void = () => undefined;

  constructor(
    private readonly pool: Pool,
    secret: string,
    private readonly watch: RelayWatch,
    private readonly logger: Logger,
    private readonly receive: (key: string, broadcast: Broadcast) => void,
  ) {
    this.key = createHmac('sha256', secret).update('tenantry realtime relay').digest();
    if (watch.kind === 'listen') void this.connect();
    // The pool has no "ended" event; this lets the listening connection go with the pool.
    this.watchdog = setInterval(() => {
      if (this.pool.ending) this.stop();
    }, 500);
    this.watchdog.unref();
  }

  /** Sends a broadcast this instance has delivered to its own sockets on to the other instances. */
  publish(key: string, broadcast: Broadcast): void {
    if (this.closed || this.watch.kind === 'off') return;
    const wire: Wire = { key, topic: broadcast.topic, private: broadcast.private, event: broadcast.event };
    if (broadcast.body.kind === 'json') wire.json = broadcast.body.value;
    else wire.bytes = broadcast.body.bytes.toString('base64');
    if (broadcast.meta) wire.meta = broadcast.meta;
    this.send(wire);
  }

  /** Sends a presence message on to the other instances. */
  publishPresence(message: PresenceWire): void {
    if (this.closed || this.watch.kind === 'off') return;
    this.send(message);
  }

  private send(wire: Wire | PresenceWire): void {
    const encoded = Buffer.from(JSON.stringify(wire)).toString('base64');
    const data = `${encoded}.${this.sign(encoded)}`;
    const total = Math.max(1, Math.ceil(data.length / CHUNK_CHARS));
    if (this.queue.length + total > MAX_QUEUED_CHUNKS) {
      this.warn(
        'realtime: broadcasts are arriving faster than they can be relayed; some stay on this instance',
      );
      return;
    }
    const id = `${this.instance}:${(this.sequence += 1)}`;
    for (let index = 0; index < total; index += 1) {
      const chunk = data.slice(index * CHUNK_CHARS, (index + 1) * CHUNK_CHARS);
      this.queue.push(`${id}:${index}:${total}:${chunk}`);
    }
    if (!this.sending) setImmediate(() => void this.flush());
  }

  /** Sends what is still queued (for a second at most), then stops listening. */
  async close(): Promise<void> {
    if (this.closed) return;
    const deadline = Date.now() + 1000;
    while ((this.queue.length > 0 || this.sending) && Date.now() < deadline && !this.pool.ending) {
      if (!this.sending) void this.flush();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    this.stop();
  }

  private stop(): void {
    this.closed = true;
    clearInterval(this.watchdog);
    this.queue = [];
    const client = this.listener;
    this.listener = undefined;
    if (client) {
      client.removeAllListeners('end');
      client.removeAllListeners('error');
      client.on('error', () => undefined);
      void client.end().catch(() => undefined);
    }
  }

  private async flush(): Promise<void> {
    if (this.sending || this.closed) return;
    this.sending = true;
    try {
      while (this.queue.length > 0 && !this.closed && !this.pool.ending) {
        // One statement, one transaction: a broadcast's chunks are delivered together.
        const batch = this.queue.splice(0, 500);
        await this.pool.query('select pg_notify($1, c) from unnest($2::text[]) as c', [CHANNEL, batch]);
      }
    } catch (error) {
      this.warn('realtime: relaying broadcasts to other instances failed', error);
    } finally {
      this.sending = false;
    }
  }

  private onNotification(payload: string): void {
    const [instance, sequence, index, total, ...rest] = payload.split(':');
    if (instance === this.instance || rest.length !== 1) return;
    const count = Number(total);
    const at = Number(index);
    if (!Number.isInteger(count) || !Number.isInteger(at) || at < 0 || at >= count || count > 10_000) return;
    const id = `${instance}:${sequence}`;
    let assembly = this.assemblies.get(id);
    if (!assembly) {
      this.prune();
      if (this.assemblies.size >= MAX_ASSEMBLIES) return;
      assembly = { parts: new Array<string | undefined>(count), got: 0, started: Date.now() };
      this.assemblies.set(id, assembly);
    }
    if (assembly.parts[at] === undefined) {
      assembly.parts[at] = rest[0];
      assembly.got += 1;
    }
    if (assembly.got < count) return;
    this.assemblies.delete(id);
    const data = assembly.parts.join('');
    const dot = data.lastIndexOf('.');
    const encoded = data.slice(0, dot);
    const given = Buffer.from(data.slice(dot + 1));
    const expected = Buffer.from(this.sign(encoded));
    if (dot < 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      this.warn('realtime: ignored a relayed broadcast whose signature does not verify');
      return;
    }
    let wire: Wire | PresenceWire;
    try {
      wire = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8')) as Wire | PresenceWire;
    } catch {
      return;
    }
    if (wire.t === 'p') {
      this.onPresence(wire, instance!);
      return;
    }
    this.receive(wire.key, {
      topic: wire.topic,
      private: wire.private,
      event: wire.event,
      body:
        wire.bytes !== undefined
          ? { kind: 'binary', bytes: Buffer.from(wire.bytes, 'base64') }
          : { kind: 'json', value: wire.json },
      ...(wire.meta ? { meta: wire.meta } : {}),
    });
  }

  private sign(encoded: string): string {
    return createHmac('sha256', this.key).update(encoded).digest('base64url');
  }

  private prune(): void {
    const now = Date.now();
    for (const [id, assembly] of this.assemblies) {
      if (now - assembly.started > ASSEMBLY_TIMEOUT_MS) this.assemblies.delete(id);
    }
  }

  private async connect(): Promise<void> {
    if (this.closed || this.pool.ending || this.watch.kind !== 'listen') return;
    const client = new pg.Client({
      ...this.pool.options,
      ...(this.watch.url ? { connectionString: this.watch.url } : {}),
      application_name: 'tenantry realtime relay',
    });
    let failed = false;
    const retry = () => {
      if (failed) return;
      failed = true;
      if (this.listener === client) this.listener = undefined;
      client.end().catch(() => undefined);
      if (this.closed || this.pool.ending) return;
      setTimeout(() => void this.connect(), LISTEN_RETRY_MS).unref();
    };
    client.on('error', retry);
    client.on('end', retry);
    client.on('notification', (message) => {
      if (message.channel === CHANNEL && message.payload) this.onNotification(message.payload);
    });
    try {
      await client.connect();
      await client.query(`listen ${CHANNEL}`);
      if (this.closed) {
        failed = true;
        await client.end();
        return;
      }
      this.listener = client;
      this.onListening();
    } catch (error) {
      this.warn('realtime: the relay could not listen; retrying', error);
      retry();
    }
  }

  private warn(message: string, error?: unknown): void {
    const now = Date.now();
    if (now - this.lastWarned < WARN_INTERVAL_MS) return;
    this.lastWarned = now;
    this.logger.warn(error ? { err: error } : {}, message);
  }
}
