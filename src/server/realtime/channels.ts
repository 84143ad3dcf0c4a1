// In charge of channels: joining (topic, config, the caller's token, a private channel's
// policies, postgres_changes bindings), what a joined channel may push (broadcast, presence,
// a new access token), leaving, and closing a channel whose token expired or whose caller lost
// the right to read it. Every refusal is a reply or a system message in Supabase's words; a
// refused join changes nothing.
import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import type { RealtimeConfig } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { TokenSigner } from '../identity/access-tokens.js';
import type { ProjectKeys } from '../identity/caller.js';
import type { Logger } from '../logger.js';
import { callerOfToken, type RealtimeCaller } from './auth.js';
import { permissionsFor, requireActiveCaller, type Permissions } from './authorization.js';
import type { Broadcast } from './broadcast.js';
import type { StoredBroadcasts } from './messages.js';
import { parseBindings, type PostgresChanges, type PostgresChangesAnswer } from './postgres-changes.js';
import { Presence } from './presence.js';
import { isRecord, type BroadcastPush, type Message } from './protocol.js';
import { Quotas, TOO_MANY_JOINS, TOO_MANY_MESSAGES } from './quotas.js';
import { replayRequest } from './replay.js';
import type { RealtimeStats } from './stats.js';
import { topicKey, Topics, type Channel, type ChannelSocket } from './topics.js';

const TOPIC_PREFIX = 'realtime:';
/** setTimeout's longest delay; a later expiry is re-armed when this one fires */
const MAX_TIMER_MS = 2 ** 31 - 1;

const PUBLIC_PERMISSIONS: Permissions = {
  readBroadcast: true,
  readPresence: true,
  writeBroadcast: true,
  writePresence: true,
};

/** The sockets' side of a channel: the socket plus the channels it has joined. */
export interface ChannelOwner extends ChannelSocket {
  readonly apikey: string;
  /** the client's address group: anonymous callers' limits count against it */
  readonly address: string;
  readonly channels: Map<string, Channel>;
  /** false once the socket has closed: a join that was waiting on the database then registers nothing */
  isOpen(): boolean;
  /** closes the whole socket (a client joining too fast is disconnected, as on Supabase) */
  close(code: number, reason: string): void;
}

export interface ChannelDeps {
  pool: Pool;
  keys: ProjectKeys;
  signer: TokenSigner;
  limits: RealtimeConfig;
  postgresChanges: PostgresChanges;
  logger: Logger;
  /** delivers a broadcast to the topic's channels, here and on the other instances */
  publish: (key: string, broadcast: Broadcast, from: Channel | null) => void;
  /** counts refusals for the metrics */
  stats?: RealtimeStats;
  /** broadcasts stored in realtime.messages (realtime.send) and their replay */
  stored?: StoredBroadcasts;
}

/** Supabase's FlexibleBoolean: true, "true", 1 and the like. */
function flag(value: unknown): boolean {
  return value === true || value === 'true' || value === 1 || value === '1';
}

function reply(socket: ChannelSocket, message: Message, status: 'ok' | 'error', response: unknown): void {
  if (status === 'error' && isRecord(response)) {
    const reason = response.reason ?? response.error;
    if (typeof reason === 'string') statsOf(socket)?.refused(reason);
  }
  socket.push({
    joinRef: message.joinRef,
    ref: message.ref,
    topic: message.topic,
    event: 'phx_reply',
    payload: { status, response },
  });
}

/** The words Supabase's join errors use for a token that is refused. */
function tokenRefusal(token: string | null, error: unknown): string {
  const reason = error instanceof Error ? error.message : 'invalid token';
  if (token && /expired/i.test(reason)) {
    const exp = safeExp(token);
    if (exp !== null) {
      return `InvalidJWTExpiration: Token has expired ${Math.max(0, Math.floor(Date.now() / 1000) - exp)} seconds ago`;
    }
  }
  return `InvalidJWTToken: ${reason}`;
}

function safeExp(token: string): number | null {
  try {
    const exp = decodeJwt(token).exp;
    return typeof exp === 'number' ? exp : null;
  } catch {
    return null;
  }
}

/** The database's refusal of an ended session or a banned or deleted account, in plain words. */
function databaseRefusal(error: unknown): string | null {
  const raw = (error as { message?: unknown }).message;
  if ((error as { code?: unknown }).code !== 'PGRST' || typeof raw !== 'string') return null;
  try {
    const parsed = JSON.parse(raw) as { message?: unknown };
    return typeof parsed.message === 'string' ? parsed.message : null;
  } catch {
    return null;
  }
}

/** Refusals are counted where the socket's service keeps its figures. */
const statsBySocket = new WeakMap<ChannelSocket, RealtimeStats>();
const statsOf = (socket: ChannelSocket) => statsBySocket.get(socket);

export class Channels {
  readonly topics = new Topics();
  readonly presence = new Presence(this.topics);
  readonly quotas: Quotas;

  constructor(private readonly deps: ChannelDeps) {
    this.quotas = new Quotas(deps.limits, (schema, table) =>
      deps.postgresChanges.scopeColumn?.(schema, table),
    );
  }

  /** Where a socket's refusals are counted. */
  counted(socket: ChannelSocket): void {
    if (this.deps.stats) statsBySocket.set(socket, this.deps.stats);
  }

  /** A message for a topic other than `phoenix`. */
  async handle(owner: ChannelOwner, message: Message): Promise<void> {
    if (message.event === 'phx_join') return this.join(owner, message);
    const channel = owner.channels.get(message.topic);
    // Phoenix answers a push to a channel the socket has not joined (or an outdated join) so.
    if (!channel || (message.joinRef !== null && message.joinRef !== channel.joinRef)) {
      if (message.ref !== null) reply(owner, message, 'error', { reason: 'unmatched topic' });
      return;
    }
    switch (message.event) {
      case 'phx_leave':
        reply(owner, message, 'ok', {});
        this.close(owner, channel);
        return;
      case 'access_token':
        return this.refreshToken(owner, channel, message);
      case 'presence':
        return this.presencePush(owner, channel, message);
      default:
        reply(owner, message, 'error', { reason: `unknown event: ${message.event.slice(0, 100)}` });
    }
  }

  /** A broadcast push from a joined channel. */
  broadcast(owner: ChannelOwner, push: BroadcastPush): void {
    const channel = owner.channels.get(push.topic);
    const asMessage: Message = {
      joinRef: push.joinRef,
      ref: push.ref,
      topic: push.topic,
      event: 'broadcast',
      payload: {},
    };
    if (!channel || (push.joinRef !== null && push.joinRef !== channel.joinRef)) {
      if (push.ref !== null) reply(owner, asMessage, 'error', { reason: 'unmatched topic' });
      return;
    }
    if (push.size > this.deps.limits.maxPayloadBytes) {
      // Supabase answers this whether or not the sender asked for acknowledgements.
      if (push.ref !== null) reply(owner, asMessage, 'error', { error: 'payload_size_exceeded' });
      return;
    }
    // A private channel's sender without the right to send is dropped silently, as on Supabase.
    if (channel.private && !channel.permissions.writeBroadcast) return;
    // Over its user's or workspace's rate, the channel is closed as one over its socket's is.
    if (!this.quotas.message(channel)) return this.shutDown(owner, channel, TOO_MANY_MESSAGES);
    this.deps.publish(
      channel.key,
      { topic: channel.topic, private: channel.private, event: push.event, body: push.body },
      channel,
    );
    // A broadcast its workspace's queue had no room for closed the channel: nothing to acknowledge.
    if (owner.channels.get(channel.topic) !== channel) return;
    if (channel.broadcastAck && push.ref !== null) reply(owner, asMessage, 'ok', {});
  }

  /** Closes every channel of a socket that went away, without telling it. */
  dropAll(owner: ChannelOwner): void {
    for (const channel of owner.channels.values()) this.forget(owner, channel);
  }

  /** Tells the channel why it is being closed (a system error), then closes it. */
  shutDown(owner: ChannelOwner, channel: Channel, reason: string): void {
    this.deps.stats?.refused(reason);
    owner.push({
      joinRef: channel.joinRef,
      ref: null,
      topic: channel.topic,
      event: 'system',
      payload: { extension: 'system', status: 'error', message: reason, channel: channel.name },
    });
    this.close(owner, channel);
  }

  private async join(owner: ChannelOwner, message: Message): Promise<void> {
    const { topic } = message;
    const fail = (reason: string) => reply(owner, message, 'error', { reason });
    if (!topic.startsWith(TOPIC_PREFIX)) return fail('unmatched topic');
    const name = topic.slice(TOPIC_PREFIX.length);
    if (name === '') return fail('TopicNameRequired: You must provide a topic name');
    if (message.joinRef === null) return fail('a join needs a join_ref');
    const payload = isRecord(message.payload) ? message.payload : {};
    const config = isRecord(payload.config) ? payload.config : {};
    const broadcastConfig = isRecord(config.broadcast) ? config.broadcast : {};
    const presenceConfig = isRecord(config.presence) ? config.presence : {};
    const bindings = parseBindings(config.postgres_changes);
    if (bindings === null)
      return fail('Malformed postgres_changes: a list of {event, schema, table?, filter?}');
    const isPrivate = flag(config.private);
    const replay = replayRequest(broadcastConfig, isPrivate);
    if ('refusal' in replay) return fail(replay.refusal);
    const previous = owner.channels.get(topic);
    if (!previous && owner.channels.size >= this.deps.limits.maxChannelsPerSocket) {
      return fail('ChannelRateLimitReached: Too many channels');
    }
    const rawToken = payload.access_token ?? payload.user_token;
    const token = typeof rawToken === 'string' ? rawToken : null;
    let caller: RealtimeCaller;
    try {
      caller = await callerOfToken(owner.apikey, token, this.deps.keys, this.deps.signer);
    } catch (error) {
      return fail(tokenRefusal(token, error));
    }
    // Supabase disconnects a client joining too fast, after saying why.
    if (this.quotas.join(name, bindings, caller.caller, owner.address) !== null) {
      fail(TOO_MANY_JOINS);
      return owner.close(1008, 'Too many joins per second');
    }
    let permissions = PUBLIC_PERMISSIONS;
    try {
      // A private channel's check includes the caller's standing; a public one asks only that.
      if (isPrivate) permissions = await permissionsFor(this.deps.pool, caller.caller, name);
      else await requireActiveCaller(this.deps.pool, caller.caller);
    } catch (error) {
      const refusal = databaseRefusal(error);
      if (refusal) return fail(`Unauthorized: ${refusal}`);
      this.deps.logger.error({ err: error, topic }, 'realtime: checking a channel failed');
      return fail('Unknown Error on Channel');
    }
    if (isPrivate && !permissions.readBroadcast && !permissions.readPresence) {
      return fail(`Unauthorized: You do not have permissions to read from this Channel topic: ${name}`);
    }
    // The socket may have gone while the database answered: then nothing is left behind.
    if (!owner.isOpen()) return;
    // A second join of the same topic (a client's rejoin) replaces the first.
    const current = owner.channels.get(topic);
    if (current) this.forget(owner, current);
    const presenceKey =
      typeof presenceConfig.key === 'string' && presenceConfig.key !== '' ? presenceConfig.key : randomUUID();
    const channel: Channel = {
      topic,
      name,
      joinRef: message.joinRef,
      private: isPrivate,
      key: topicKey(isPrivate, topic),
      socket: owner,
      broadcastSelf: flag(broadcastConfig.self),
      broadcastAck: flag(broadcastConfig.ack),
      presenceKey,
      caller,
      permissions,
      expiryTimer: undefined,
    };
    const overQuota = this.quotas.attach(owner, channel, bindings, owner.address);
    if (overQuota !== null) return fail(overQuota);
    owner.channels.set(topic, channel);
    this.topics.add(channel);
    this.armExpiry(owner, channel);
    // Stored broadcasts are followed from before the answer; a replay is sent right after it.
    const startStored = await this.deps.stored?.attach(channel, replay.replay);
    let changes: PostgresChangesAnswer;
    try {
      changes = await this.deps.postgresChanges.subscribe(channel, bindings);
    } catch (error) {
      this.forget(owner, channel);
      this.deps.logger.error({ err: error, topic }, 'realtime: subscribing to changes failed');
      return fail('Unknown Error on Channel');
    }
    // Left, replaced or disconnected while the database answered: nothing is left behind.
    if (owner.channels.get(topic) !== channel || !owner.isOpen()) {
      this.deps.postgresChanges.unsubscribe(channel);
      return;
    }
    reply(owner, message, 'ok', { postgres_changes: changes.bindings });
    for (const system of changes.system) {
      owner.push({
        joinRef: channel.joinRef,
        ref: null,
        topic,
        event: 'system',
        payload: { extension: 'postgres_changes', ...system, channel: name },
      });
    }
    changes.start?.();
    startStored?.();
    // Phoenix Presence holds every diff until the state arrives: it always follows the join.
    if (flag(presenceConfig.enabled) && (!isPrivate || permissions.readPresence)) {
      owner.push({
        joinRef: channel.joinRef,
        ref: null,
        topic,
        event: 'presence_state',
        payload: this.presence.state(channel.key),
      });
    }
  }

  private presencePush(owner: ChannelOwner, channel: Channel, message: Message): void {
    const payload = isRecord(message.payload) ? message.payload : {};
    if (channel.private && !channel.permissions.writePresence) {
      return reply(owner, message, 'error', {
        reason: `Unauthorized: You do not have permissions to write to this Channel topic: ${channel.name}`,
      });
    }
    const state = payload.event === 'track' ? (payload.payload ?? {}) : null;
    const overQuota = this.quotas.presence(
      channel,
      state === null ? null : Buffer.byteLength(JSON.stringify(state)),
    );
    if (overQuota !== null) return this.shutDown(owner, channel, overQuota);
    if (payload.event === 'untrack') {
      this.presence.untrack(channel);
      return reply(owner, message, 'ok', {});
    }
    if (payload.event !== 'track')
      return reply(owner, message, 'error', { reason: 'unknown presence event' });
    if (!isRecord(state))
      return reply(owner, message, 'error', { reason: 'Presence track payload must be a map' });
    this.presence.track(channel, state);
    reply(owner, message, 'ok', {});
  }

  /**
   * A new access token for the channel: no reply when it is taken (as on Supabase). A token that
   * is refused, or that no longer lets the caller read a private channel, closes the channel.
   */
  private async refreshToken(owner: ChannelOwner, channel: Channel, message: Message): Promise<void> {
    const payload = isRecord(message.payload) ? message.payload : {};
    const token = payload.access_token;
    // Keys of the new format, a missing token and the same token again change nothing.
    if (typeof token !== 'string' || token === '' || token.startsWith('sb_')) return;
    if (channel.caller.caller.kind === 'user' && channel.caller.caller.token === token) return;
    let caller: RealtimeCaller;
    try {
      caller = await callerOfToken(owner.apikey, token, this.deps.keys, this.deps.signer);
    } catch (error) {
      return this.shutDown(owner, channel, tokenRefusal(token, error).replace(/^\w+: /, ''));
    }
    if (owner.channels.get(channel.topic) !== channel) return; // left while the token was checked
    if (channel.private) {
      let permissions: Permissions;
      try {
        permissions = await permissionsFor(this.deps.pool, caller.caller, channel.name);
      } catch (error) {
        const refusal = databaseRefusal(error);
        if (!refusal) this.deps.logger.error({ err: error }, 'realtime: checking a private channel failed');
        return this.shutDown(owner, channel, refusal ?? 'Unknown Error on Channel');
      }
      if (owner.channels.get(channel.topic) !== channel) return;
      if (!permissions.readBroadcast && !permissions.readPresence) {
        return this.shutDown(
          owner,
          channel,
          `You no longer have permission to read from this Channel topic: ${channel.name}`,
        );
      }
      channel.permissions = permissions;
    }
    channel.caller = caller;
    this.armExpiry(owner, channel);
  }

  /**
   * Judges a private channel's policies again for the caller it has now (a workspace API key
   * whose standing changed): the permissions are replaced, or the channel is closed when it may
   * no longer read.
   */
  async rejudge(channel: Channel): Promise<void> {
    const owner = channel.socket as ChannelOwner;
    const caller = channel.caller;
    let permissions: Permissions;
    try {
      permissions = await permissionsFor(this.deps.pool, caller.caller, channel.name);
    } catch (error) {
      if (owner.channels.get(channel.topic) !== channel) return;
      const refusal = databaseRefusal(error);
      if (!refusal) this.deps.logger.error({ err: error }, 'realtime: checking a private channel failed');
      return this.shutDown(owner, channel, refusal ?? 'Unknown Error on Channel');
    }
    // Left, or given another token, while the database answered: that path judged it.
    if (owner.channels.get(channel.topic) !== channel || channel.caller !== caller) return;
    if (!permissions.readBroadcast && !permissions.readPresence) {
      return this.shutDown(
        owner,
        channel,
        `You no longer have permission to read from this Channel topic: ${channel.name}`,
      );
    }
    channel.permissions = permissions;
  }

  /** Closes the channel when its token expires, with Supabase's system message. */
  private armExpiry(owner: ChannelOwner, channel: Channel): void {
    clearTimeout(channel.expiryTimer);
    channel.expiryTimer = undefined;
    const exp = channel.caller.exp;
    if (exp === null) return;
    const wait = exp * 1000 - Date.now();
    channel.expiryTimer = setTimeout(
      () => {
        if (owner.channels.get(channel.topic) !== channel) return;
        if (Date.now() < exp * 1000) return this.armExpiry(owner, channel);
        const ago = Math.max(0, Math.floor(Date.now() / 1000) - exp);
        this.shutDown(owner, channel, `Token has expired ${ago} seconds ago`);
      },
      Math.min(MAX_TIMER_MS, Math.max(0, wait)),
    );
    channel.expiryTimer.unref();
  }

  /** Closes the channel: the client is told (phx_close) and forgets it without rejoining. */
  private close(owner: ChannelOwner, channel: Channel): void {
    this.forget(owner, channel);
    owner.push({
      joinRef: channel.joinRef,
      ref: channel.joinRef,
      topic: channel.topic,
      event: 'phx_close',
      payload: {},
    });
  }

  private forget(owner: ChannelOwner, channel: Channel): void {
    clearTimeout(channel.expiryTimer);
    if (owner.channels.get(channel.topic) === channel) owner.channels.delete(channel.topic);
    this.topics.remove(channel);
    this.quotas.detach(channel);
    this.presence.untrack(channel);
    this.deps.postgresChanges.unsubscribe(channel);
  }
}
