// In charge of how many connections clients may hold open: in total (beyond which Node closes a
// new connection as it arrives) and per address (counted by the socket's peer, an IPv6 client by
// its /64). Every connection costs a descriptor, and the process has a fixed number of them: a
// client that could open them without bound would leave none for anyone else. A refused
// connection is closed before a byte is read from it. Refusals are logged at most once a minute.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../logger.js';
import { addressGroup, ipAddress } from './client-address.js';

const REFUSAL_LOG_INTERVAL_MS = 60_000;

export interface ConnectionLimits {
  total: number;
  perAddress: number;
}

export interface ConnectionCounts {
  /** connections open now */
  open: number;
  /** addresses with a connection open now */
  addresses: number;
  /** connections refused since the start, over the total and over an address's share */
  refusedTotal: number;
  refusedPerAddress: number;
}

/** Applies the limits to `server`; the returned function tells the counts. */
export function limitConnections(
  server: Server,
  limits: ConnectionLimits,
  logger: Logger,
): () => ConnectionCounts {
  const perAddress = new Map<string, number>();
  let open = 0;
  let refusedTotal = 0;
  let refusedPerAddress = 0;
  let lastLogged = 0;
  let unlogged = 0;

  const noteRefusal = (reason: string) => {
    unlogged += 1;
    const now = Date.now();
    if (now - lastLogged < REFUSAL_LOG_INTERVAL_MS) return;
    logger.warn({ refused: unlogged, reason, limits }, 'connections refused');
    lastLogged = now;
    unlogged = 0;
  };

  server.maxConnections = limits.total;
  server.on('drop', () => {
    refusedTotal += 1;
    noteRefusal('HTTP_MAX_CONNECTIONS');
  });
  server.on('connection', (socket: Socket) => {
    const address = addressGroup(ipAddress(socket.remoteAddress)) ?? 'unknown';
    const held = perAddress.get(address) ?? 0;
    if (held >= limits.perAddress) {
      refusedPerAddress += 1;
      noteRefusal('HTTP_MAX_CONNECTIONS_PER_ADDRESS');
      socket.destroy();
      return;
    }
    perAddress.set(address, held + 1);
    open += 1;
    socket.once('close', () => {
      open -= 1;
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left > 0) perAddress.set(address, left);
      else perAddress.delete(address);
    });
  });

  return () => ({ open, addresses: perAddress.size, refusedTotal, refusedPerAddress });
}
