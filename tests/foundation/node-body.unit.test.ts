// Reading a request body on node:http directly (the data API and the payment webhook): the body
// whole, a declared or growing body over the cap refused with 413, and a client that goes away
// mid-body, or before the body is asked for, ends the wait with a 400 instead of leaving it open.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, test } from 'vitest';
import { readNodeBody } from '../../src/server/http/body.js';

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
});

/** A server whose first request is handed to `onRequest`; resolves with its port. */
function serve(onRequest: (req: IncomingMessage) => void): Promise<number> {
  server = createServer((req, res) => {
    onRequest(req);
    req.on('error', () => undefined);
    res.on('error', () => undefined);
  });
  return new Promise((resolve) =>
    server!.listen(0, '127.0.0.1', () => resolve((server!.address() as AddressInfo).port)),
  );
}

/** Sends headers and the first bytes of a body, then (optionally) drops the connection. */
function partialPost(port: number, headers: Record<string, string>, first: Buffer, drop: boolean) {
  const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers });
  req.on('error', () => undefined);
  req.write(first);
  if (drop) setTimeout(() => req.destroy(), 50);
  return req;
}

test('the whole body, and 413 for a declared or a growing body over the cap', async () => {
  const results: Promise<Uint8Array>[] = [];
  const port = await serve((req) => {
    const read = readNodeBody(req, 1000);
    read.catch(() => undefined); // asserted below
    results.push(read);
  });
  const whole = partialPost(port, { 'content-length': '5' }, Buffer.from('hello'), false);
  whole.end();
  await expect.poll(() => results.length).toBe(1);
  expect(Buffer.from(await results[0]!).toString()).toBe('hello');
  partialPost(port, { 'content-length': '5000' }, Buffer.alloc(10), true);
  await expect.poll(() => results.length).toBe(2);
  await expect(results[1]).rejects.toMatchObject({ status: 413 });
  partialPost(port, { 'transfer-encoding': 'chunked' }, Buffer.alloc(2000), true);
  await expect.poll(() => results.length).toBe(3);
  await expect(results[2]).rejects.toMatchObject({ status: 413 });
});

test('a client that goes away mid-body ends the wait with a 400', async () => {
  let read: Promise<Uint8Array> | undefined;
  const port = await serve((req) => {
    read = readNodeBody(req);
    read.catch(() => undefined); // asserted below
  });
  partialPost(port, { 'content-length': '1000' }, Buffer.alloc(10), true);
  await expect.poll(() => read !== undefined).toBe(true);
  await expect(read).rejects.toMatchObject({ status: 400, code: 'body_incomplete' });
});

test('a client already gone when the body is asked for ends the wait with a 400', async () => {
  let arrived: IncomingMessage | undefined;
  const port = await serve((req) => (arrived = req));
  partialPost(port, { 'content-length': '1000' }, Buffer.alloc(10), true);
  await expect.poll(() => arrived?.destroyed).toBe(true);
  await expect(readNodeBody(arrived!)).rejects.toMatchObject({ status: 400, code: 'body_incomplete' });
});
