// Test support: a real HTTP receiver for outgoing webhooks that records each request (headers, raw
// body, arrival time) and answers with the status the test sets; it counts the connections opened.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedHook {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver {
  port: number;
  url(path?: string): string;
  received: ReceivedHook[];
  /** the status every request is answered with */
  status: number;
  /** connections opened to it so far */
  readonly connections: number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const state = { received: [] as ReceivedHook[], status: 200, connections: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.received.push({
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      res.writeHead(state.status, { 'content-type': 'text/plain' });
      res.end(state.status < 300 ? 'ok' : `refused with ${state.status} ` + 'x'.repeat(5000));
    });
  });
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    get received() {
      return state.received;
    },
    get status() {
      return state.status;
    },
    set status(value: number) {
      state.status = value;
    },
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
