// Benchmark server for the storage backend alone: the local-disk backend behind a minimal
// node:http handler (PUT /<name> stores with put, GET /<name> streams get), no database and no
// API around it, so the storage suite can tell the backend's cost from the API's.
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { LocalBackend } from '../src/server/storage/backends/local.js';

const backend = new LocalBackend(
  process.env.REFERENCE_DIR ?? mkdtempSync(path.join(tmpdir(), 'storage-backend-')),
);
const keyOf = (url: string) => `bench/${encodeURIComponent(url.slice(1))}`;

const server = createServer((req, res) => {
  const key = keyOf(req.url ?? '/');
  if (req.method === 'PUT') {
    backend
      .put(key, req, { maxBytes: 5 * 1024 ** 3, contentType: 'application/octet-stream' })
      .then((stored) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stored)),
      )
      .catch(() => res.writeHead(500).end());
  } else if (req.method === 'GET') {
    backend
      .get(key)
      .then((got) => {
        if (!got) return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': got.object.size });
        return pipeline(got.stream, res);
      })
      .catch(() => res.destroy());
  } else {
    res.writeHead(405).end();
  }
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  process.exit(0);
});
