// Benchmark reference for realtime: the least a server can do to fan database changes out to
// websockets. A trigger NOTIFYs each row as JSON; this process LISTENs and sends each one, framed
// as realtime-js expects, to every socket of the row's workspace (given in the socket's URL). No
// row-level security, no filters, no outbox, no resumption: what remains is the floor.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { WebSocketServer, type WebSocket } from 'ws';

const listener = new pg.Client({ connectionString: process.env.DATABASE_URL });
await listener.connect();
const byWorkspace = new Map<string, Set<WebSocket>>();
const server = createServer((_req, res) => res.writeHead(404).end());
const wss = new WebSocketServer({ server, perMessageDeflate: false });
wss.on('connection', (ws, req) => {
  const workspace = new URL(req.url ?? '/', 'http://localhost').searchParams.get('workspace') ?? '';
  const members = byWorkspace.get(workspace) ?? new Set();
  byWorkspace.set(workspace, members);
  members.add(ws);
  ws.on('close', () => members.delete(ws));
});
listener.on('notification', (message) => {
  const change = JSON.parse(message.payload ?? '{}') as { workspace_id: string; data: unknown };
  const frame = JSON.stringify([
    null,
    null,
    'realtime:items',
    'postgres_changes',
    { ids: [1], data: change.data },
  ]);
  for (const ws of byWorkspace.get(change.workspace_id) ?? []) ws.send(frame);
});
await listener.query('listen bench_reference');
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  wss.close();
  server.close();
  void listener.end().then(() => process.exit(0));
});
