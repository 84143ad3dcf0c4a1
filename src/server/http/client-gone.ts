// In charge of noticing that a request's client went away: a signal that aborts when the
// request's connection closes, for work only worth doing while someone waits for its answer
// (a place in the queue for a turn at the database).
import type { IncomingMessage } from 'node:http';

/**
 * Runs `work` with a signal that aborts if `req`'s connection closes before `work` settles. A
 * browser cannot cancel one request on a keep-alive connection except by closing it, so the close
 * is what navigating away, closing the tab or aborting a fetch looks like from here.
 */
export async function whileConnected<T>(
  req: IncomingMessage | undefined,
  work: (gone: AbortSignal | undefined) => Promise<T>,
): Promise<T> {
  const socket = req?.socket;
  if (!socket) return work(undefined);
  const controller = new AbortController();
  if (socket.destroyed) controller.abort();
  const onClose = () => controller.abort();
  socket.once('close', onClose);
  try {
    return await work(controller.signal);
  } finally {
    socket.removeListener('close', onClose);
  }
}
