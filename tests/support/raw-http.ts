// Test support for the HTTP edge: raw TCP exchanges (bytes in, what came back and when the server
// closed), connections from chosen loopback addresses (Linux routes all of 127.0.0.0/8 to the
// loopback, so each is a distinct client address), and a server process's open descriptors and
// resident memory from /proc.
import { readdirSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

export interface Exchange {
  /** everything the server sent */
  response: string;
  /** when the server closed the connection, from the moment it was opened; null if it had not */
  closedAfterMs: number | null;
}

/**
 * Connects from `localAddress`, sends `data` (each string of an array after `gapMs`), and waits
 * up to `waitMs` for the server to close; then closes from this side.
 */
export function exchange(
  port: number,
  data: string | string[],
  options: { localAddress?: string; waitMs: number; gapMs?: number },
): Promise<Exchange> {
  return new Promise((resolve) => {
    const opened = performance.now();
    const parts = Array.isArray(data) ? [...data] : [data];
    let response = '';
    let closedAfterMs: number | null = null;
    let dripping: NodeJS.Timeout | undefined;
    const socket = connect({ port, host: '127.0.0.1', localAddress: options.localAddress }, () => {
      socket.write(parts.shift() ?? '');
      if (parts.length > 0) {
        dripping = setInterval(() => {
          const next = parts.shift();
          if (next === undefined) clearInterval(dripping);
          else if (!socket.destroyed) socket.write(next);
        }, options.gapMs ?? 100);
      }
    });
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (response += chunk));
    socket.on('error', () => undefined);
    const timer = setTimeout(() => {
      clearInterval(dripping);
      socket.destroy();
      resolve({ response, closedAfterMs });
    }, options.waitMs);
    socket.on('close', () => {
      closedAfterMs = performance.now() - opened;
      clearInterval(dripping);
      clearTimeout(timer);
      resolve({ response, closedAfterMs });
    });
  });
}

/** Opens a connection from `localAddress` and sends nothing; resolves once connected. */
export function openIdle(port: number, localAddress: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    let connected = false;
    const socket = connect({ port, host: '127.0.0.1', localAddress }, () => {
      connected = true;
      resolve(socket);
    });
    // Read (and drop) whatever comes, so the server's closing is seen as 'end' and 'close'.
    socket.resume();
    socket.on('error', (error) => (connected ? undefined : reject(error)));
  });
}

/** A WebSocket handshake to `path`, as a browser sends it. */
export function websocketRequest(path: string): string {
  return [
    `GET ${path} HTTP/1.1`,
    'Host: localhost',
    'Connection: Upgrade',
    'Upgrade: websocket',
    'Sec-WebSocket-Version: 13',
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
    '',
    '',
  ].join('\r\n');
}

/** Open descriptors of process `pid`. */
export function descriptors(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** Resident memory of process `pid`, in bytes. */
export function residentBytes(pid: number): number {
  const line = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(line?.[1] ?? 0) * 1024;
}

/** Waits until `check` holds, polling every 100 ms, or until `timeoutMs`; answers the last value. */
export async function settle<T>(read: () => T, check: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = read();
  while (!check(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = read();
  }
  return value;
}
