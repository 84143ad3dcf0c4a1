// In charge of telling pages and server actions who is connected. Next.js does not give them the
// socket, so the process's HTTP server stamps each web request with a header carrying the client
// address (by the same rule as the APIs) and the socket address, after throwing away any copy the
// client sent. The stamp carries a per-process secret, so pages believe only stamps this process
// made. Next.js re-requests a server action's redirect target from itself, forwarding the
// original headers: such a request arrives from loopback with a valid stamp, which is kept, so
// the target is rendered for the real client and not for "localhost".
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { clientAddress, ipAddress } from '../http/client-address.js';

export const CLIENT_ADDRESS_HEADER = 'x-tenantry-client-address';

export interface ConnectedClient {
  /** the address per-address limits and sessions use (X-Forwarded-For only when trusted) */
  client: string | null;
  /** the peer of the TCP connection, whatever any header says */
  socket: string | null;
}

// Shared through globalThis: the server and the separately bundled pages must agree on it.
const SEAL_KEY = Symbol.for('tenantry.client-address-seal');

function seal(): Buffer {
  const store = globalThis as Record<symbol, Buffer | undefined>;
  store[SEAL_KEY] ??= randomBytes(32);
  return store[SEAL_KEY];
}

/** The client a stamp names, or null when the value is not a stamp this process made. */
export function readClientStamp(value: string | null | undefined): ConnectedClient | null {
  if (typeof value !== 'string' || value.length > 200) return null;
  const [proof, client, socket, ...rest] = value.split(' ');
  if (!proof || client === undefined || socket === undefined || rest.length > 0) return null;
  const given = Buffer.from(proof, 'base64url');
  const expected = seal();
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  return { client: ipAddress(client), socket: ipAddress(socket) };
}

function formatStamp(connected: ConnectedClient): string {
  return [seal().toString('base64url'), connected.client ?? '-', connected.socket ?? '-'].join(' ');
}

export function isLoopback(address: string | null): boolean {
  return address !== null && (address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(address));
}

/**
 * Replaces whatever the request says about its client with the truth. A valid stamp is kept only
 * on a loopback connection (this process forwarding to itself); anything else is overwritten.
 */
export function stampClientAddress(req: IncomingMessage, trustProxy: boolean): ConnectedClient {
  const socket = ipAddress(req.socket?.remoteAddress);
  const sent = req.headers[CLIENT_ADDRESS_HEADER];
  if (isLoopback(socket) && typeof sent === 'string') {
    const forwarded = readClientStamp(sent);
    if (forwarded) return forwarded;
  }
  const forwardedFor = req.headers['x-forwarded-for'];
  const headers = new Headers();
  if (typeof forwardedFor === 'string') headers.set('x-forwarded-for', forwardedFor);
  const connected = { client: clientAddress(headers, req, trustProxy), socket };
  req.headers[CLIENT_ADDRESS_HEADER] = formatStamp(connected);
  return connected;
}
