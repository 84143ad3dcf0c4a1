// In charge of HTTP upgrades (WebSocket and the like): a registry of the paths that accept one,
// each with its handler. Nothing else may keep an upgraded socket: once Node hands a socket over
// for an upgrade, no server timeout applies to it any more, so a request nobody answers would hold
// its descriptor for as long as the client likes. An upgrade to any other path is answered with
// an HTTP error and its socket destroyed at once; only an optional HTTP/2 upgrade (h2c) of a
// bodiless request is served as the plain HTTP/1.1 request it also is, as it would be by a server
// without upgrades.
import { ServerResponse, STATUS_CODES, type IncomingMessage, type RequestListener } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** Takes over an upgrade request's socket; from then on its timeouts are the handler's to keep. */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

const BODILESS_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** How long a refused upgrade's answer may take to leave before its socket is destroyed anyway. */
const REFUSAL_FLUSH_MS = 1000;

export interface UpgradeRouterOptions {
  /** answers a plain request (the h2c case) */
  listener: RequestListener;
  /** a served-as-plain request's socket is closed after this long without activity */
  idleTimeoutMs: number;
  /** told about a handler that threw */
  onError: (error: unknown, path: string) => void;
}

export class UpgradeRouter {
  private readonly routes = new Map<string, UpgradeHandler>();

  constructor(private readonly options: UpgradeRouterOptions) {}

  /** Lets upgrades to exactly `path` (query string aside) reach `handler`. */
  register(path: string, handler: UpgradeHandler): void {
    if (!path.startsWith('/')) throw new Error(`an upgrade path starts with a slash: ${path}`);
    if (this.routes.has(path)) throw new Error(`${path} already has an upgrade handler`);
    this.routes.set(path, handler);
  }

  /** The 'upgrade' listener of the server. */
  handle(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // An error on a socket nobody listens to would be thrown: whatever happens, it goes quietly.
    socket.on('error', () => socket.destroy());
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const handler = this.routes.get(path);
    if (handler) {
      try {
        handler(req, socket, head);
      } catch (error) {
        this.options.onError(error, path);
        refuseUpgrade(socket, 500, 'The upgrade failed');
      }
      return;
    }
    if (isOptionalHttp2(req) && BODILESS_METHODS.has(req.method ?? '') && !hasBody(req)) {
      this.serveAsPlain(req, socket);
      return;
    }
    refuseUpgrade(socket, 404, `Nothing at ${path.slice(0, 200)} accepts an upgrade`);
  }

  /** Answers the request on its socket as the request listener would, then closes the socket. */
  private serveAsPlain(req: IncomingMessage, duplex: Duplex): void {
    // This server is plain node:http over TCP: the upgraded stream is the connection's socket.
    const socket = duplex as Socket;
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    res.once('finish', () => {
      res.detachSocket(socket);
      socket.destroySoon();
    });
    res.once('close', () => socket.destroy());
    // The socket left the server's timeouts with the upgrade: it gets its own idle bound back.
    socket.setTimeout(this.options.idleTimeoutMs, () => socket.destroy());
    Promise.resolve(this.options.listener(req, res)).catch((error: unknown) => {
      this.options.onError(error, req.url ?? '/');
      socket.destroy();
    });
  }
}

/** `Upgrade: h2c`: the client also accepts the HTTP/1.1 answer (RFC 7540 section 3.2). */
function isOptionalHttp2(req: IncomingMessage): boolean {
  const protocols = (req.headers.upgrade ?? '').split(',').map((p) => p.trim().toLowerCase());
  return protocols.length > 0 && protocols.every((p) => p === 'h2c');
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Writes a complete HTTP error response to the socket and destroys it. */
export function refuseUpgrade(socket: Duplex, status: number, message: string): void {
  if (socket.destroyed) return;
  const body = `${message}\n`;
  const response = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'Connection: close',
    'Content-Type: text/plain; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
  // The answer goes into the kernel's send buffer, which still delivers it after the close.
  socket.end(response, () => socket.destroy());
  // A client that does not read keeps the write pending: the socket goes regardless.
  const timer = setTimeout(() => socket.destroy(), REFUSAL_FLUSH_MS).unref();
  socket.once('close', () => clearTimeout(timer));
}
