// In charge of assembling realtime: the WebSocket endpoint (GET /realtime/v1/websocket, taken
// over from the HTTP server's upgrade router), its HTTP endpoints, and the lifetime of its
// sockets. An upgraded socket is outside the HTTP server's timeouts and its shutdown, so this
// module keeps both: a socket that misses its heartbeats is closed, and `close()` closes them all.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import { WebSocketServer } from 'ws';
import type { Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import { addressGroup, clientAddress } from '../http/client-address.js';
import { nodeHeaders } from '../http/headers.js';
import type { UpgradeHandler } from '../http/upgrades.js';
import type { TokenSigner } from '../identity/access-tokens.js';
import type { ProjectKeys } from '../identity/caller.js';
import type { Logger } from '../logger.js';
import { callerOfKey } from './auth.js';
import type { Broadcast } from './broadcast.js';
import { Channels, type ChannelDeps } from './channels.js';
import { ChangeFeed } from './changes.js';
import { FairFanout } from './fanout.js';
import { KeyWatch } from './key-watch.js';
import { AddressCounter } from './limits.js';
import { unservedPostgresChanges, type PostgresChanges } from './postgres-changes.js';
import { parseVsn } from './protocol.js';
import { createRestHandler, REALTIME_API_PATH } from './rest.js';
import { Relay, type RelayWatch } from './relay.js';
import { StoredBroadcasts } from './messages.js';
import { Connection } from './socket.js';
import { RealtimeStats } from './stats.js';
import type { Channel } from './topics.js';

export const REALTIME_WEBSOCKET_PATH = '/realtime/v1/websocket';
/** Room in a frame for the envelope around the largest payload (topic, event, refs, JSON framing). */
const FRAME_OVERHEAD_BYTES = 64 * 1024;
/** How often an instance tells the others it is alive (they forget its presence after 15 s of silence). */
const PRESENCE_ALIVE_MS = 5000;
/** How long closing sockets get to say goodbye at shutdown before they are cut. */
const CLOSE_GRACE_MS = 1000;

/** What realtime tells the metrics endpoint. */
export interface RealtimeFigures {
  sockets: number;
  channels: number;
  messagesIn: number;
  messagesOut: number;
  refusals: ReadonlyMap<string, number>;
  /** broadcasts waiting for their workspace's turn */
  pendingBroadcasts: number;
  /** age of the newest database change delivered when it was read; null without a change feed */
  changesLagSeconds: number | null;
}

export interface RealtimeDeps {
  config: Config;
  pool: Pool;
  logger: Logger;
  keys: ProjectKeys;
  signer: TokenSigner;
  postgresChanges?: PostgresChanges;
}

/**
 * How instances hear each other's broadcasts: LISTEN on the pool's database, or on the direct
 * DATABASE_LISTEN_URL past a transaction-mode pooler; behind one without it, a LISTEN cannot be
 * held and each instance's broadcasts stay its own.
 */
export function relayWatchFor(database: Config['database']): RelayWatch {
  if (database.listenUrl) return { kind: 'listen', url: database.listenUrl };
  if (database.pooler === 'transaction') return { kind: 'off' };
  return { kind: 'listen' };
}

/** True for requests realtime's HTTP endpoints answer. */
export function isRealtimeRequest(url: string): boolean {
  return (
    url === REALTIME_API_PATH ||
    url.startsWith(`${REALTIME_API_PATH}/`) ||
    url.startsWith(`${REALTIME_API_PATH}?`)
  );
}

/** Answers an upgrade with Supabase's JSON refusal ({"error": ...}) and closes the socket. */
function refuse(socket: Duplex, status: number, error: string): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ error });
  socket.end(
    [
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
      'Connection: close',
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      body,
    ].join('\r\n'),
    () => socket.destroy(),
  );
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
}

export function createRealtime(deps: RealtimeDeps) {
  const { config, logger } = deps;
  const limits = config.realtime;
  const stats = new RealtimeStats();
  // A broadcast goes to this instance's channels (in its workspace's turn: one workspace's
  // flood does not hold up another's), and through PostgreSQL to the others'.
  const publish = (key: string, broadcast: Broadcast, from: Channel | null) => {
    fanout.deliver(key, broadcast, from);
    relay.publish(key, broadcast);
  };
  // Database changes: every instance with subscribers reads the outbox itself, every
  // REALTIME_CHANGES_POLL_MS (decision 0081: a NOTIFY per writing transaction cost writers more).
  const watch = relayWatchFor(config.database);
  const feed =
    deps.postgresChanges === undefined
      ? new ChangeFeed({
          pool: deps.pool,
          logger,
          schemas: config.dataApi.schemas,
          retentionMs: limits.changesRetentionMs,
          maxRecordBytes: limits.maxRecordBytes,
          pollMs: limits.changesPollMs,
        })
      : null;
  const postgresChanges = deps.postgresChanges ?? feed ?? unservedPostgresChanges;
  const channelDeps: ChannelDeps = {
    pool: deps.pool,
    keys: deps.keys,
    signer: deps.signer,
    limits,
    postgresChanges,
    logger,
    publish,
    stats,
  };
  const channels = new Channels(channelDeps);
  // Broadcasts stored by realtime.send: every instance with channels reads them itself, on the
  // same poll as database changes (decision 0084), so they need no relay between instances.
  const stored = new StoredBroadcasts({
    pool: deps.pool,
    logger,
    topics: channels.topics,
    pollMs: limits.changesPollMs,
    retentionMs: limits.messagesRetentionMs,
  });
  channelDeps.stored = stored;
  const fanout = new FairFanout(channels.topics);
  // A workspace whose queue is full has the sending channel closed, as one over its rate; a
  // relayed broadcast (no sender here) is dropped and counted. Every channel's socket is a Connection.
  fanout.overflow = (from) => {
    if (from) channels.shutDown(from.socket as Connection, from, 'Too many messages per second');
    else stats.refused('Too many messages per second');
  };
  const relay: Relay = new Relay(deps.pool, config.jwtSecret, watch, logger, (key, broadcast) =>
    fanout.deliver(key, broadcast, null),
  );
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: limits.maxPayloadBytes + FRAME_OVERHEAD_BYTES,
    perMessageDeflate: false,
  });
  // Presence crosses instances too: changes are announced, a new instance asks for everything
  // (hello), and each instance says it is alive so the others can forget one that died.
  channels.presence.announce = (message) => relay.publishPresence(message);
  relay.onPresence = (message, instance) => channels.presence.fromRelay(message, instance);
  relay.onListening = () => relay.publishPresence({ t: 'p', op: 'hello' });
  const alive = setInterval(() => {
    relay.publishPresence({ t: 'p', op: 'alive' });
    channels.presence.expire();
  }, PRESENCE_ALIVE_MS);
  alive.unref();
  // A workspace API key revoked, expired or left without its creator closes its open channels
  // on this instance within REALTIME_KEY_CHECK_MS (decision 0091), not when its claims run out.
  const keyWatch = new KeyWatch({
    pool: deps.pool,
    logger,
    channels: () => channels.topics.all(),
    shutDown: (channel, reason) => channels.shutDown(channel.socket as Connection, channel, reason),
    rejudge: (channel) => channels.rejudge(channel),
  });
  const keyCheck = setInterval(() => void keyWatch.check(), limits.keyCheckMs);
  keyCheck.unref();
  const addresses = new AddressCounter(limits.maxConnectionsPerAddress);
  const connections = new Set<Connection>();
  let closing = false;

  // A client sends a heartbeat every 25 s (realtime-js); one silent past the timeout is gone.
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const connection of connections) {
        if (now - connection.lastSeen > limits.heartbeatTimeoutMs)
          connection.close(1000, 'heartbeat timeout');
      }
    },
    Math.max(50, Math.min(5000, Math.floor(limits.heartbeatTimeoutMs / 4))),
  );
  sweep.unref();

  const upgrade: UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (closing) return refuse(socket, 503, 'Server is shutting down');
    const url = new URL(req.url ?? '/', 'http://localhost');
    const vsn = parseVsn(url.searchParams.get('vsn'));
    if (vsn === null) return refuse(socket, 400, 'Unsupported vsn: use 1.0.0 or 2.0.0');
    const apikey = url.searchParams.get('apikey') ?? nodeHeaders(req.headers).get('apikey');
    const address =
      addressGroup(clientAddress(nodeHeaders(req.headers), req, config.trustProxy)) ?? 'unknown';
    // Counted from here, so sockets still being checked count too.
    if (!addresses.acquire(address)) {
      stats.refused('Too many connected users');
      return refuse(socket, 429, 'Too many connected users');
    }
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      addresses.release(address);
    };
    void callerOfKey(apikey, deps.keys, deps.signer).then(
      (caller) => {
        if (!caller || !apikey) {
          release();
          return refuse(
            socket,
            401,
            'Invalid API key: the apikey parameter must be the project key or the service-role key',
          );
        }
        if (closing || socket.destroyed) {
          release();
          return refuse(socket, 503, 'Server is shutting down');
        }
        // handleUpgrade destroys a socket whose handshake it refuses without calling back: the
        // address's share is given back when the socket closes, whichever way it does.
        socket.once('close', release);
        wss.handleUpgrade(req, socket, head, (ws) => {
          const connection = new Connection({
            ws,
            vsn,
            apikey,
            address,
            channels,
            maxMessagesPerSecond: limits.maxMessagesPerSecond,
            logger,
            stats,
            onClose: () => {
              connections.delete(connection);
              release();
            },
          });
          connections.add(connection);
        });
      },
      (error: unknown) => {
        release();
        logger.error({ err: error }, 'realtime: checking a socket failed');
        refuse(socket, 500, 'Unknown error');
      },
    );
  };

  return {
    upgrade,
    /** realtime's HTTP endpoints (/realtime/v1/api/...) */
    listener: createRestHandler({
      pool: deps.pool,
      keys: deps.keys,
      signer: deps.signer,
      limits,
      publish,
      logger,
    }),
    /** open sockets, for tests and metrics */
    connections: () => connections.size,
    /** joined channels, for tests and metrics */
    channels: () => channels.topics.size(),
    /** the figures the metrics endpoint shows */
    figures: (): RealtimeFigures => ({
      sockets: connections.size,
      channels: channels.topics.size(),
      messagesIn: stats.messagesIn,
      messagesOut: stats.messagesOut,
      refusals: stats.refusals,
      pendingBroadcasts: fanout.pending(),
      changesLagSeconds: feed?.lagSeconds() ?? null,
    }),
    /** Closes every socket (code 1001) and refuses new ones; resolves when all are gone. */
    async close(): Promise<void> {
      closing = true;
      clearInterval(sweep);
      clearInterval(alive);
      clearInterval(keyCheck);
      const gone = [...connections].map(
        (connection) =>
          new Promise<void>((resolve) => {
            connection.onGone(resolve);
            connection.close(1001, 'server shutting down');
          }),
      );
      await Promise.all(gone);
      wss.close();
      await feed?.close();
      await stored.close();
      // The other instances forget this one's presence now rather than when it falls silent.
      relay.publishPresence({ t: 'p', op: 'bye' });
      await relay.close();
    },
  };
}
