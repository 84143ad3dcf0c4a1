// In charge of one realtime socket: reading its frames in order (one at a time, so a join is
// settled before the next message), answering heartbeats, holding it to its message rate, and
// closing it when it falls silent, floods, sends what is not the protocol, or cannot keep up.
import type { WebSocket } from 'ws';
import type { Logger } from '../logger.js';
import type { ChannelOwner, Channels } from './channels.js';
import { MessageRate } from './limits.js';
import {
  decodeBinary,
  decodeText,
  encodeMessage,
  ProtocolError,
  type Incoming,
  type Message,
  type Vsn,
} from './protocol.js';
import type { RealtimeStats } from './stats.js';
import type { Channel } from './topics.js';

/** A socket whose unsent frames pile up past this is not reading: it is closed rather than buffered. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;
/** Frames waiting for their turn, per socket; past this the socket is flooding (its rate allows fewer). */
const MAX_QUEUED_FRAMES = 1000;

export interface ConnectionOptions {
  ws: WebSocket;
  vsn: Vsn;
  apikey: string;
  /** the client's address group */
  address: string;
  channels: Channels;
  maxMessagesPerSecond: number;
  logger: Logger;
  stats?: RealtimeStats;
  onClose: () => void;
}

export class Connection implements ChannelOwner {
  readonly vsn: Vsn;
  readonly apikey: string;
  readonly address: string;
  readonly channels = new Map<string, Channel>();
  /** when the client last sent anything */
  lastSeen = Date.now();
  private readonly ws: WebSocket;
  private readonly rate: MessageRate;
  private turn: Promise<void> = Promise.resolve();
  private queued = 0;
  private closed = false;
  private readonly pongs: (() => void)[] = [];

  constructor(private readonly options: ConnectionOptions) {
    this.ws = options.ws;
    this.vsn = options.vsn;
    this.apikey = options.apikey;
    this.address = options.address;
    options.channels.counted(this);
    this.rate = new MessageRate(options.maxMessagesPerSecond);
    this.ws.on('message', (data, isBinary) =>
      this.receive(data as Buffer | Buffer[] | ArrayBuffer, isBinary),
    );
    this.ws.on('error', () => this.ws.terminate());
    // Pongs come back in the order of their pings.
    this.ws.on('pong', () => this.pongs.shift()?.());
    this.ws.on('close', () => {
      this.closed = true;
      options.channels.dropAll(this);
      options.onClose();
    });
  }

  isOpen(): boolean {
    return !this.closed;
  }

  /** Calls `callback` once the socket has closed (at once if it has). */
  onGone(callback: () => void): void {
    if (this.ws.readyState === this.ws.CLOSED) callback();
    else this.ws.once('close', callback);
  }

  push(message: Message): void {
    this.sendFrame(encodeMessage(message, this.vsn));
  }

  sendFrame(frame: string | Buffer): void {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
    if (this.ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.close(1008, 'too slow: messages are not being read');
      return;
    }
    this.ws.send(frame, { binary: typeof frame !== 'string' });
    if (this.options.stats) this.options.stats.messagesOut += 1;
  }

  ping(onPong: () => void): void {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
    this.pongs.push(onPong);
    this.ws.ping();
  }

  /** Closes with a code and reason the client sees; a client that does not answer is cut a second later. */
  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.ws.close(code, reason);
    setTimeout(() => this.ws.terminate(), 1000).unref();
  }

  private receive(data: Buffer | Buffer[] | ArrayBuffer, isBinary: boolean): void {
    if (this.closed) return;
    this.lastSeen = Date.now();
    const bytes = Buffer.isBuffer(data)
      ? data
      : Array.isArray(data)
        ? Buffer.concat(data)
        : Buffer.from(data);
    let incoming: Incoming;
    try {
      incoming = isBinary ? decodeBinary(bytes, this.vsn) : decodeText(bytes.toString('utf8'), this.vsn);
    } catch (error) {
      if (error instanceof ProtocolError) return this.close(1007, error.message.slice(0, 120));
      throw error;
    }
    // Heartbeats keep the socket alive whatever else it sends, and are not counted.
    if (incoming.kind === 'message' && incoming.message.topic === 'phoenix') {
      if (incoming.message.event === 'heartbeat') {
        this.push({ ...incoming.message, event: 'phx_reply', payload: { status: 'ok', response: {} } });
      }
      return;
    }
    if (this.options.stats) this.options.stats.messagesIn += 1;
    if (this.queued >= MAX_QUEUED_FRAMES) return this.close(1008, 'Too many messages per second');
    // Over the rate or not, a message takes its turn: the refusal follows what came before it.
    const withinRate = this.rate.take();
    this.queued += 1;
    this.turn = this.turn
      .then(() => (withinRate ? this.dispatch(incoming) : this.overRate(incoming)))
      .catch((error: unknown) => this.options.logger.error({ err: error }, 'realtime: a message failed'))
      .finally(() => {
        this.queued -= 1;
      });
  }

  private async dispatch(incoming: Incoming): Promise<void> {
    if (this.closed) return;
    if (incoming.kind === 'broadcast') return this.options.channels.broadcast(this, incoming.push);
    return this.options.channels.handle(this, incoming.message);
  }

  /** Supabase closes the channel that went over the rate, saying why; other pushes are refused. */
  private overRate(incoming: Incoming): void {
    const message = incoming.kind === 'message' ? incoming.message : { ...incoming.push, payload: {} };
    const channel = this.channels.get(message.topic);
    if (channel) {
      this.options.channels.shutDown(this, channel, 'Too many messages per second');
      return;
    }
    if (message.ref !== null) {
      this.push({
        joinRef: message.joinRef,
        ref: message.ref,
        topic: message.topic,
        event: 'phx_reply',
        payload: { status: 'error', response: { reason: 'Too many messages per second' } },
      });
    }
  }
}
