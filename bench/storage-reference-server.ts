// Benchmark reference for file storage: a bare node:http server streaming request bodies into
// files and files into responses with fs streams (no database, no checks, no fsync, no hashing):
// the floor any storage server on this machine stands on. PUT /<name> stores, GET /<name> serves.
import { createReadStream, createWriteStream, mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

const dir = process.env.REFERENCE_DIR ?? mkdtempSync(path.join(tmpdir(), 'storage-reference-'));
const fileOf = (url: string) => path.join(dir, encodeURIComponent(url.slice(1)));

const server = createServer((req, res) => {
  const file = fileOf(req.url ?? '/');
  const done = (error?: unknown) => {
    if (error) res.writeHead(500).end();
  };
  if (req.method === 'PUT') {
    pipeline(req, createWriteStream(file))
      .then(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'))
      .catch(done);
  } else if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    pipeline(createReadStream(file), res).catch(() => res.destroy());
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
