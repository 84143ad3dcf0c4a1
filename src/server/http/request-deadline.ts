// In charge of how long a request may take to arrive. Every request's body must be in within the
// request timeout (HTTP_REQUEST_TIMEOUT_MS), as Node's own requestTimeout would demand, except an
// upload the server has accepted (its caller known, its limits checked): a large file on a slow
// link may take hours, so it is bounded instead by progress, cut only when no byte has moved for
// the upload idle timeout (STORAGE_UPLOAD_IDLE_TIMEOUT_MS).
import type { IncomingMessage, ServerResponse } from 'node:http';

interface Deadline {
  timer: NodeJS.Timeout | null;
  /** the socket's idle timeout to restore once the upload is answered (HTTP_IDLE_TIMEOUT_MS) */
  socketIdleMs: number;
}

const deadlines = new WeakMap<IncomingMessage, Deadline>();

/** What Node answers a request past its request timeout, before closing the connection. */
const TIMED_OUT = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';

/**
 * Gives req until ms from now to have sent its whole body; past that, a 408 (when nothing was
 * answered yet) and the connection is closed, as Node's requestTimeout does.
 */
export function boundRequest(
  req: IncomingMessage,
  res: ServerResponse,
  limits: { requestTimeoutMs: number; socketIdleMs: number },
): void {
  const deadline: Deadline = { timer: null, socketIdleMs: limits.socketIdleMs };
  deadline.timer = setTimeout(() => {
    deadline.timer = null;
    if (req.complete) return;
    const socket = req.socket;
    if (!res.headersSent && socket.writable) socket.write(TIMED_OUT);
    socket.destroy();
  }, limits.requestTimeoutMs);
  deadline.timer.unref();
  deadlines.set(req, deadline);
  res.once('close', () => {
    if (deadline.timer) clearTimeout(deadline.timer);
    deadline.timer = null;
  });
}

/**
 * From now on req is an accepted upload: no whole-request deadline, but its connection is cut when
 * nothing moves on it for idleMs. The connection's usual idle timeout returns once it is answered.
 */
export function streamingUpload(req: IncomingMessage, res: ServerResponse, idleMs: number): void {
  const deadline = deadlines.get(req);
  if (deadline?.timer) {
    clearTimeout(deadline.timer);
    deadline.timer = null;
  }
  // A request already read, or whose connection is already gone (the client left), has nothing
  // left to bound; the connection is kept to restore its idle timeout after the answer.
  const socket = req.socket as IncomingMessage['socket'] | null;
  if (req.complete || !socket) return;
  // No 'timeout' listener: Node destroys the socket (its default, as for every idle connection).
  socket.setTimeout(idleMs);
  if (deadline) res.once('close', () => socket.setTimeout(deadline.socketIdleMs));
}
