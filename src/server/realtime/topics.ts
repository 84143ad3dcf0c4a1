// In charge of which joined channels listen on which topic, in this process. A private channel and
// a public one of the same name are different topics (as on Supabase): a public subscriber never
// hears what a private channel's policies let through, and the reverse.
import type { RealtimeCaller } from './auth.js';
import type { Permissions } from './authorization.js';
import type { Message } from './protocol.js';

/** What a channel needs of its socket. */
export interface ChannelSocket {
  readonly vsn: '1.0.0' | '2.0.0';
  /** sends a message in the socket's framing */
  push(message: Message): void;
  /** sends a frame already encoded for this socket's framing */
  sendFrame(frame: string | Buffer): void;
  /** a WebSocket ping: `onPong` runs when its pong comes back, so every frame sent before was read */
  ping(onPong: () => void): void;
}

/** One joined channel: a socket's subscription to one topic. */
export interface Channel {
  /** `realtime:<name>` */
  readonly topic: string;
  /** the topic without its prefix, as policies and system messages name it */
  readonly name: string;
  readonly joinRef: string;
  readonly private: boolean;
  readonly key: string;
  readonly socket: ChannelSocket;
  /** the sender hears its own broadcasts */
  readonly broadcastSelf: boolean;
  /** broadcasts are answered with a reply */
  readonly broadcastAck: boolean;
  readonly presenceKey: string;
  caller: RealtimeCaller;
  permissions: Permissions;
  /** closes the channel at the token's expiry */
  expiryTimer: NodeJS.Timeout | undefined;
}

export function topicKey(isPrivate: boolean, topic: string): string {
  return `${isPrivate ? 'private' : 'public'}:${topic}`;
}

export class Topics {
  private readonly byKey = new Map<string, Set<Channel>>();

  add(channel: Channel): void {
    let members = this.byKey.get(channel.key);
    if (!members) {
      members = new Set();
      this.byKey.set(channel.key, members);
    }
    members.add(channel);
  }

  remove(channel: Channel): void {
    const members = this.byKey.get(channel.key);
    if (!members) return;
    members.delete(channel);
    if (members.size === 0) this.byKey.delete(channel.key);
  }

  /** Joined channels in this process, all topics together. */
  size(): number {
    let total = 0;
    for (const members of this.byKey.values()) total += members.size;
    return total;
  }

  /** Every joined channel in this process. */
  *all(): Iterable<Channel> {
    for (const members of this.byKey.values()) yield* members;
  }

  members(key: string): ReadonlySet<Channel> {
    return this.byKey.get(key) ?? new Set();
  }
}
