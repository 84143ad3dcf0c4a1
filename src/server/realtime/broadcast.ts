// In charge of delivering a broadcast to a topic's channels: encoded once per framing, sent to
// every channel that may read it (on a private topic, only those whose policies let them read
// broadcasts), the sender left out unless it asked to hear itself.
import { encodeBroadcast, type BroadcastBody, type Vsn } from './protocol.js';
import type { Channel, Topics } from './topics.js';

export interface Broadcast {
  /** `realtime:<name>` */
  topic: string;
  private: boolean;
  event: string;
  body: BroadcastBody;
  meta?: Record<string, unknown>;
}

/** Sends `broadcast` to the topic's channels; returns how many received it. */
export function deliver(topics: Topics, key: string, broadcast: Broadcast, from: Channel | null): number {
  const frames = new Map<Vsn, string | Buffer | null>();
  let delivered = 0;
  for (const channel of topics.members(key)) {
    if (channel === from && !channel.broadcastSelf) continue;
    if (channel.private && !channel.permissions.readBroadcast) continue;
    const vsn = channel.socket.vsn;
    let frame = frames.get(vsn);
    if (frame === undefined) {
      frame = encodeBroadcast(broadcast.topic, broadcast.event, broadcast.body, broadcast.meta, vsn);
      frames.set(vsn, frame);
    }
    // A 1.0.0 socket cannot receive bytes, as on Supabase.
    if (frame === null) continue;
    channel.socket.sendFrame(frame);
    delivered += 1;
  }
  return delivered;
}
