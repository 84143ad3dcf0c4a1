// The server's upgrade registry: a service that registers its path (as the realtime service does
// at /realtime/v1/websocket) receives the upgrade's socket; every other path is answered 404 and
// closed at once, a path cannot be taken twice, and a handler that throws costs only its socket.
import { createHash } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { exchange, websocketRequest } from '../support/raw-http.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let port: number;

beforeAll(async () => {
  server = await startTestServer();
  port = Number(new URL(server.url).port);
  // A minimal WebSocket endpoint: accepts the handshake, sends one text frame, closes.
  server.http.upgrades.register('/test/v1/websocket', (req, socket: Duplex) => {
    const accept = createHash('sha1')
      .update(`${String(req.headers['sec-websocket-key'])}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
      .digest('base64');
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    socket.end(Buffer.from([0x81, 0x02, 0x68, 0x69])); // "hi"
  });
  server.http.upgrades.register('/broken', () => {
    throw new Error('the handler failed');
  });
});
afterAll(async () => server?.close());

test('a registered path receives the upgrade; a query string does not change the path', async () => {
  const result = await exchange(port, websocketRequest('/test/v1/websocket?apikey=x'), { waitMs: 3000 });
  expect(result.response).toMatch(/^HTTP\/1\.1 101 /);
  expect(result.response).toContain('Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
  // The frame after the handshake (its first byte is not text, so only its payload is checked).
  expect(result.response.endsWith('\x02hi')).toBe(true);
});

test('an upgrade to any other path is answered 404 and closed at once', async () => {
  for (const path of ['/api/health', '/rest/v1/projects', '/test/v1/websocket/other', '/']) {
    const result = await exchange(port, websocketRequest(path), { waitMs: 3000 });
    expect(result.response, path).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    expect(result.response, path).toContain('Connection: close');
    expect(result.closedAfterMs, path).not.toBeNull();
    expect(result.closedAfterMs!, path).toBeLessThan(1000);
  }
  expect(server.http.connections().open).toBe(0);
});

test('a handler that throws answers 500 and closes; the server goes on', async () => {
  const result = await exchange(port, websocketRequest('/broken'), { waitMs: 3000 });
  expect(result.response).toMatch(/^HTTP\/1\.1 500 /);
  expect(result.closedAfterMs).not.toBeNull();
  const health = await fetch(`${server.url}/api/health`);
  expect(health.status).toBe(200);
});

test('a path takes one handler, and must be a path', () => {
  expect(() => server.http.upgrades.register('/test/v1/websocket', () => undefined)).toThrow(
    'already has an upgrade handler',
  );
  expect(() => server.http.upgrades.register('realtime', () => undefined)).toThrow('starts with a slash');
});
