// In charge of presence, as Phoenix Presence shows it to realtime-js: per topic, who is tracked
// under which key with which state. A joined channel gets the whole state (presence_state) right
// after its join; every change reaches the topic's channels as a presence_diff of joins and
// leaves. A changed state is a leave of the old and a join of the new, as on Supabase.
import { randomBytes, randomUUID } from 'node:crypto';
import type { PresenceWire } from './relay.js';
import type { Channel, Topics } from './topics.js';

interface Tracked {
  /** names the entry to the other instances, across updates */
  id: string;
  key: string;
  meta: Record<string, unknown> & { phx_ref: string };
  /** the state as tracked, to tell a repeated track (nothing changes) from an update */
  json: string;
}

type Metas = Record<string, { metas: Record<string, unknown>[] }>;

function phxRef(): string {
  return randomBytes(12).toString('base64url');
}

function add(into: Metas, key: string, meta: Record<string, unknown>): void {
  (into[key] ??= { metas: [] }).metas.push(meta);
}

interface RemoteTracked {
  instance: string;
  key: string;
  meta: Record<string, unknown>;
}

/** An instance not heard from for this long is gone, and so is its presence. */
export const INSTANCE_SILENCE_MS = 15_000;

export class Presence {
  /** topic key -> channel -> what it tracks */
  private readonly byTopic = new Map<string, Map<Channel, Tracked>>();
  /** what channels on other instances track: topic key -> entry id -> state */
  private readonly remote = new Map<string, Map<string, RemoteTracked>>();
  /** other instances, by when they were last heard from */
  private readonly instances = new Map<string, number>();
  /** tells the other instances of a change here */
  announce: (message: PresenceWire) => void = () => undefined;

  constructor(private readonly topics: Topics) {}

  /** The topic's whole state (every instance's), for a channel that just joined. */
  state(key: string): Metas {
    const state: Metas = {};
    for (const tracked of this.byTopic.get(key)?.values() ?? []) add(state, tracked.key, tracked.meta);
    for (const tracked of this.remote.get(key)?.values() ?? []) add(state, tracked.key, tracked.meta);
    return state;
  }

  /** A presence message from another instance. */
  fromRelay(message: PresenceWire, instance: string): void {
    this.instances.set(instance, Date.now());
    switch (message.op) {
      case 'hello':
        // A new instance knows nothing yet: everything tracked here is told again.
        for (const [key, tracked] of this.byTopic) {
          for (const entry of tracked.values()) {
            this.announce({ t: 'p', op: 'track', key, id: entry.id, pkey: entry.key, meta: entry.meta });
          }
        }
        return;
      case 'bye':
        this.forgetInstance(instance);
        this.instances.delete(instance);
        return;
      case 'track':
        return this.remoteTrack(instance, message.key, message.id, message.pkey, message.meta);
      case 'untrack':
        return this.remoteUntrack(message.key, message.id);
      default:
    }
  }

  /** Forgets the presence of instances silent for longer than `INSTANCE_SILENCE_MS`. */
  expire(now = Date.now()): void {
    for (const [instance, seen] of this.instances) {
      if (now - seen <= INSTANCE_SILENCE_MS) continue;
      this.instances.delete(instance);
      this.forgetInstance(instance);
    }
  }

  private remoteTrack(
    instance: string,
    key: string,
    id: string,
    pkey: string,
    meta: Record<string, unknown>,
  ): void {
    if (
      typeof key !== 'string' ||
      typeof id !== 'string' ||
      typeof pkey !== 'string' ||
      typeof meta !== 'object'
    )
      return;
    let entries = this.remote.get(key);
    const previous = entries?.get(id);
    // Told again (after a hello): nothing changed.
    if (previous && previous.meta.phx_ref === meta.phx_ref) return;
    if (!entries) {
      entries = new Map();
      this.remote.set(key, entries);
    }
    entries.set(id, { instance, key: pkey, meta });
    const joins: Metas = {};
    const leaves: Metas = {};
    add(joins, pkey, meta);
    if (previous) add(leaves, previous.key, previous.meta);
    this.diff(key, joins, leaves);
  }

  private remoteUntrack(key: string, id: string): void {
    const entries = this.remote.get(key);
    const previous = entries?.get(id);
    if (!entries || !previous) return;
    entries.delete(id);
    if (entries.size === 0) this.remote.delete(key);
    const leaves: Metas = {};
    add(leaves, previous.key, previous.meta);
    this.diff(key, {}, leaves);
  }

  private forgetInstance(instance: string): void {
    for (const [key, entries] of this.remote) {
      for (const [id, entry] of entries) {
        if (entry.instance === instance) this.remoteUntrack(key, id);
      }
    }
  }

  /** Tracks (or updates) the channel's state. */
  track(channel: Channel, payload: Record<string, unknown>): void {
    const json = JSON.stringify(payload);
    let tracked = this.byTopic.get(channel.key);
    const previous = tracked?.get(channel);
    if (previous && previous.json === json) return;
    const meta: Tracked['meta'] = { ...payload, phx_ref: phxRef() };
    if (previous) meta.phx_ref_prev = previous.meta.phx_ref;
    if (!tracked) {
      tracked = new Map();
      this.byTopic.set(channel.key, tracked);
    }
    const id = previous?.id ?? randomUUID();
    tracked.set(channel, { id, key: channel.presenceKey, meta, json });
    this.announce({ t: 'p', op: 'track', key: channel.key, id, pkey: channel.presenceKey, meta });
    const joins: Metas = {};
    const leaves: Metas = {};
    add(joins, channel.presenceKey, meta);
    if (previous) add(leaves, previous.key, previous.meta);
    this.diff(channel.key, joins, leaves);
  }

  /** Stops tracking the channel (untrack, leave, a closed socket); nothing happens if it was not. */
  untrack(channel: Channel): void {
    const tracked = this.byTopic.get(channel.key);
    const previous = tracked?.get(channel);
    if (!tracked || !previous) return;
    tracked.delete(channel);
    if (tracked.size === 0) this.byTopic.delete(channel.key);
    this.announce({ t: 'p', op: 'untrack', key: channel.key, id: previous.id });
    const leaves: Metas = {};
    add(leaves, previous.key, previous.meta);
    this.diff(channel.key, {}, leaves);
  }

  private diff(key: string, joins: Metas, leaves: Metas): void {
    for (const member of this.topics.members(key)) {
      // A private channel's presence is for those whose policies let them read it.
      if (member.private && !member.permissions.readPresence) continue;
      member.socket.push({
        joinRef: member.joinRef,
        ref: null,
        topic: member.topic,
        event: 'presence_diff',
        payload: { joins, leaves },
      });
    }
  }
}
