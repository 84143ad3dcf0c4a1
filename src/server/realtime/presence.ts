// In charge of presence, as Phoenix Presence shows it to realtime-js: per topic, who is tracked
// under which key with which state. A joined channel gets the whole state (presence_state) right
// after its join; every change reaches the topic's channels as a presence_diff of joins and
// leaves. A changed state is a leave of the old and a join of the new, as on Supabase.
import { randomBytes } from 'node:crypto';
import type { Channel, Topics } from './topics.js';

interface Tracked {
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

export class Presence {
  /** topic key -> channel -> what it tracks */
  private readonly byTopic = new Map<string, Map<Channel, Tracked>>();

  constructor(private readonly topics: Topics) {}

  /** The topic's whole state, for a channel that just joined. */
  state(key: string): Metas {
    const state: Metas = {};
    for (const tracked of this.byTopic.get(key)?.values() ?? []) add(state, tracked.key, tracked.meta);
    return state;
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
    tracked.set(channel, { key: channel.presenceKey, meta, json });
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
