// Test support for realtime: supabase-js clients on either protocol version (the ws package as
// transport, as on Node 20), signed-in users, and waiting for a channel's status or messages.
import { randomBytes } from 'node:crypto';
import { createClient, type RealtimeChannel, type SupabaseClient } from '@supabase/supabase-js';
import WebSocket from 'ws';
import type { TestServer } from '../support/server.js';

export type Vsn = '1.0.0' | '2.0.0';

export function realtimeClient(
  server: TestServer,
  options: { vsn?: Vsn; key?: string; heartbeatIntervalMs?: number } = {},
): SupabaseClient {
  return createClient(server.url, options.key ?? server.config.projectApiKey, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    realtime: {
      transport: WebSocket as unknown as typeof globalThis.WebSocket,
      vsn: options.vsn ?? '2.0.0',
      ...(options.heartbeatIntervalMs ? { heartbeatIntervalMs: options.heartbeatIntervalMs } : {}),
    },
  });
}

/** A new user, signed in on a realtime client of its own. */
export async function signedIn(
  server: TestServer,
  vsn: Vsn = '2.0.0',
): Promise<{ client: SupabaseClient; userId: string; token: string }> {
  const client = realtimeClient(server, { vsn });
  const email = `rt-${randomBytes(5).toString('hex')}@example.com`;
  const { data, error } = await client.auth.signUp({ email, password: 'correct horse battery' });
  if (error || !data.session || !data.user) throw error ?? new Error('no session');
  return { client, userId: data.user.id, token: data.session.access_token };
}

/** Subscribes and resolves with the first status that settles the join, and its error. */
export function subscribe(channel: RealtimeChannel): Promise<{ status: string; error?: Error }> {
  return new Promise((resolve) => {
    channel.subscribe((status, error) => {
      if (
        status === 'SUBSCRIBED' ||
        status === 'CHANNEL_ERROR' ||
        status === 'TIMED_OUT' ||
        status === 'CLOSED'
      ) {
        resolve({ status, error });
      }
    });
  });
}

/** Resolves with the first value `register` hands over, or rejects after `ms`. */
export function first<T>(register: (deliver: (value: T) => void) => void, ms = 5000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nothing arrived within ${ms} ms`)), ms);
    register((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A raw socket speaking the protocol by hand, recording every frame it receives. */
export class RawSocket {
  readonly frames: (string | Buffer)[] = [];
  closed: { code: number; reason: string } | null = null;
  private waiters: (() => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary) => {
      this.frames.push(isBinary ? data : data.toString('utf8'));
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
  }

  static open(server: TestServer, query: string): Promise<RawSocket> {
    const url = `${server.url.replace('http', 'ws')}/realtime/v1/websocket?${query}`;
    const ws = new WebSocket(url);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new RawSocket(ws)));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () =>
          reject(Object.assign(new Error(`refused: ${res.statusCode}`), { status: res.statusCode, body })),
        );
      });
    });
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' || Buffer.isBuffer(frame) ? frame : JSON.stringify(frame));
  }

  /** The JSON frames received so far, parsed. */
  json(): unknown[] {
    return this.frames.filter((f): f is string => typeof f === 'string').map((f) => JSON.parse(f) as unknown);
  }

  /** Waits until `predicate` holds over what has arrived. */
  async until(predicate: (socket: RawSocket) => boolean, ms = 5000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!predicate(this)) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`not seen within ${ms} ms; frames: ${JSON.stringify(this.frames).slice(0, 2000)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.ws.terminate();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
