// In charge of fair delivery of broadcasts across tenants: a broadcast's sends are queued per
// workspace (per topic outside workspaces) and the queues are served in turns of a few sends each,
// yielding to the event loop between batches. One workspace's flood then waits behind itself,
// never in front of another workspace's next message. Order within a queue is kept, so a topic's
// broadcasts arrive in the order they were sent. A queue is bounded: past its bound, the sender's
// channel is closed as one over its rate, rather than the process holding what it cannot send.
import { encodeBroadcast, type Vsn } from './protocol.js';
import type { Broadcast } from './broadcast.js';
import { workspaceOfTopic } from './quotas.js';
import type { Channel, Topics } from './topics.js';

/** Sends one queue makes per turn before the next queue's turn. */
export const FANOUT_QUANTUM = 32;
/** Sends per event-loop turn before yielding (to read sockets, answer heartbeats). */
export const FANOUT_BATCH = 512;
/**
 * Broadcasts one queue may hold: a workspace sending faster than its readers can be served
 * (within its rate) waits on itself up to here; the process does not buffer more for it.
 */
export const FANOUT_MAX_PENDING = 1000;

interface Job {
  broadcast: Broadcast;
  from: Channel | null;
  members: Iterator<Channel>;
  frames: Map<Vsn, string | Buffer | null>;
}

/** The queue a topic's broadcasts wait in: its workspace's, else its own. */
export function fairnessKey(key: string, broadcast: Broadcast): string {
  const workspace = workspaceOfTopic(broadcast.topic.replace(/^realtime:/, ''));
  return workspace === null ? `topic:${key}` : `workspace:${workspace}`;
}

export class FairFanout {
  private readonly queues = new Map<string, Job[]>();
  private scheduled = false;
  /** sends made synchronously in this event-loop turn */
  private direct = 0;
  private directReset = false;
  /** frames handed to sockets, for the metrics */
  sent = 0;
  /** a broadcast its queue had no room for: the sender (null when relayed) is told to stop */
  overflow: (from: Channel | null) => void = () => undefined;

  constructor(private readonly topics: Topics) {}

  /** Delivers `broadcast` to the topic's channels here: at once while nothing waits, else queued. */
  deliver(key: string, broadcast: Broadcast, from: Channel | null): void {
    const members = this.topics.members(key);
    if (members.size === 0) return;
    const job: Job = { broadcast, from, members: members.values(), frames: new Map() };
    // A quiet process sends at once; past a turn's share, everything queues (in order behind it).
    if (this.queues.size === 0 && this.direct + members.size <= FANOUT_QUANTUM) {
      this.direct += this.run(job, Infinity);
      if (!this.directReset) {
        this.directReset = true;
        setImmediate(() => {
          this.direct = 0;
          this.directReset = false;
        });
      }
      return;
    }
    const queueKey = fairnessKey(key, broadcast);
    const queue = this.queues.get(queueKey);
    if (queue && queue.length >= FANOUT_MAX_PENDING) return this.overflow(from);
    if (queue) queue.push(job);
    else this.queues.set(queueKey, [job]);
    this.schedule();
  }

  /** Broadcasts waiting, all queues together (for tests and metrics). */
  pending(): number {
    let total = 0;
    for (const queue of this.queues.values()) total += queue.length;
    return total;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.drain());
  }

  private drain(): void {
    this.scheduled = false;
    let budget = FANOUT_BATCH;
    while (budget > 0 && this.queues.size > 0) {
      // One round: every queue waiting gets a turn of up to FANOUT_QUANTUM sends.
      for (const queueKey of [...this.queues.keys()]) {
        const queue = this.queues.get(queueKey)!;
        let quantum = FANOUT_QUANTUM;
        while (quantum > 0 && queue.length > 0) {
          quantum -= this.run(queue[0]!, quantum);
          // A job that did not use the whole share left is done.
          if (quantum > 0) queue.shift();
        }
        budget -= FANOUT_QUANTUM - quantum;
        if (queue.length === 0) this.queues.delete(queueKey);
      }
    }
    if (this.queues.size > 0) this.schedule();
  }

  /** Sends to up to `max` of the job's channels; returns how many it looked at (== max when more may follow). */
  private run(job: Job, max: number): number {
    let looked = 0;
    while (looked < max) {
      const next = job.members.next();
      if (next.done) return looked;
      looked += 1;
      const channel = next.value;
      if (channel === job.from && !channel.broadcastSelf) continue;
      if (channel.private && !channel.permissions.readBroadcast) continue;
      const vsn = channel.socket.vsn;
      let frame = job.frames.get(vsn);
      if (frame === undefined) {
        const { topic, event, body, meta } = job.broadcast;
        frame = encodeBroadcast(topic, event, body, meta, vsn);
        job.frames.set(vsn, frame);
      }
      // A 1.0.0 socket cannot receive bytes, as on Supabase.
      if (frame === null) continue;
      channel.socket.sendFrame(frame);
      this.sent += 1;
    }
    return looked;
  }
}
