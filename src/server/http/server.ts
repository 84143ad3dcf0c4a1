// In charge of the process's one node:http server: requests go to the given listener, upgrades
// to the upgrade router (which answers and closes any it has no handler for), and every socket is
// bounded: connections in total and per address, and how long a client may take to send its
// headers, its whole request (request-deadline.ts: an accepted upload is bounded by its progress
// instead), its next kept-alive request, or anything at all. Nothing else may
// attach to this server: a library listening for upgrades on it would take sockets out of these
// bounds (see web.ts for Next.js).
import { createServer, type RequestListener, type Server } from 'node:http';
import type { HttpLimits } from '../config.js';
import type { Logger } from '../logger.js';
import { limitConnections, type ConnectionCounts } from './connection-limits.js';
import { boundRequest } from './request-deadline.js';
import { UpgradeRouter } from './upgrades.js';

export interface HttpServer {
  server: Server;
  /** where a service registers the path it accepts upgrades on */
  upgrades: UpgradeRouter;
  connections(): ConnectionCounts;
}

/** How often the server looks for requests past their headers or request timeout, at most. */
const MAX_CHECK_INTERVAL_MS = 1000;

export function createHttpServer(options: {
  limits: HttpLimits;
  listener: RequestListener;
  logger: Logger;
}): HttpServer {
  const { limits, listener, logger } = options;
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      // Node's requestTimeout holds every request to one deadline; the whole-request timeout is
      // kept per request instead (boundRequest), so an accepted upload can trade it for an idle one.
      requestTimeout: 0,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks the headers timeout every 30 s by default: a slow client would get up to 30 s
      // more than its bound. A quarter of the headers timeout keeps the overshoot small.
      connectionsCheckingInterval: Math.max(
        50,
        Math.min(MAX_CHECK_INTERVAL_MS, Math.floor(limits.headersTimeoutMs / 4)),
      ),
    },
    (req, res) => {
      boundRequest(req, res, {
        requestTimeoutMs: limits.requestTimeoutMs,
        socketIdleMs: limits.idleTimeoutMs,
      });
      listener(req, res);
    },
  );
  // A socket on which nothing moves for this long is destroyed (no 'timeout' listener: Node's default).
  server.timeout = limits.idleTimeoutMs;
  const connections = limitConnections(
    server,
    { total: limits.maxConnections, perAddress: limits.maxConnectionsPerAddress },
    logger,
  );
  const upgrades = new UpgradeRouter({
    listener,
    idleTimeoutMs: limits.idleTimeoutMs,
    onError: (error, path) => logger.error({ err: error, path }, 'upgrade failed'),
  });
  server.on('upgrade', (req, socket, head: Buffer) => upgrades.handle(req, socket, head));
  return { server, upgrades, connections };
}
