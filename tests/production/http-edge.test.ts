// The whole process's HTTP edge, after a page view (which is when Next.js used to attach itself
// to the server's upgrades): an upgrade to an API path, a page or an unknown path is answered and
// closed at once, and the process's descriptors come back to where they were; a client sending
// its headers slowly is cut after the headers timeout, an idle kept-alive connection after the
// keep-alive timeout; one address's connections beyond its share, and anyone's beyond the total,
// are refused, and both recover once connections close.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startApp, type AppProcess } from '../support/app-process.js';
import { descriptors, exchange, openIdle, settle, websocketRequest } from '../support/raw-http.js';

const HEADERS_TIMEOUT_MS = 1500;
const KEEP_ALIVE_TIMEOUT_MS = 1000;
const PER_ADDRESS = 20;
const TOTAL = 45;

let app: AppProcess;
let port: number;

beforeAll(async () => {
  app = await startApp({
    HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    HTTP_REQUEST_TIMEOUT_MS: '3000',
    HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
    HTTP_IDLE_TIMEOUT_MS: '5000',
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
    HTTP_MAX_CONNECTIONS: String(TOTAL),
  });
  port = Number(new URL(app.url).port);
  // One page view: the moment Next.js used to start listening for upgrades on our server.
  const page = await fetch(`${app.url}/sign-in`, { headers: { connection: 'close' } });
  expect(page.status).toBe(200);
  await page.text();
}, 300_000);
afterAll(async () => app?.stop());

const health = 'GET /api/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n';

describe('upgrades', () => {
  test('an upgrade to an API path, a page or an unknown path is answered and closed at once', async () => {
    for (const path of ['/api/health', '/sign-in', '/no/such/path', '/_next/webpack-hmr']) {
      const result = await exchange(port, websocketRequest(path), {
        localAddress: '127.0.0.2',
        waitMs: 3000,
      });
      expect(result.response, path).toMatch(/^HTTP\/1\.1 404 /);
      expect(result.closedAfterMs, path).not.toBeNull();
      expect(result.closedAfterMs!, path).toBeLessThan(1000);
    }
  });

  test('an optional HTTP/2 upgrade (h2c) is served as the plain request it also is, then closed', async () => {
    const request = [
      'GET /api/health HTTP/1.1',
      'Host: localhost',
      'Connection: Upgrade, HTTP2-Settings',
      'Upgrade: h2c',
      'HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA',
      '',
      '',
    ].join('\r\n');
    const result = await exchange(port, request, { localAddress: '127.0.0.2', waitMs: 3000 });
    expect(result.response).toMatch(/^HTTP\/1\.1 200 /);
    expect(result.response).toContain('"status":"ok"');
    expect(result.closedAfterMs).not.toBeNull();
  });

  test('hundreds of upgrades leave no descriptor behind', async () => {
    const baseline = await settle(
      () => descriptors(app.pid),
      () => true,
      0,
    );
    const paths = ['/api/health', '/sign-in', '/no/such/path'];
    for (let round = 0; round < 10; round++) {
      await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          exchange(port, websocketRequest(paths[i % paths.length]!), {
            localAddress: `127.0.1.${(i % 10) + 1}`,
            waitMs: 3000,
          }),
        ),
      );
    }
    const after = await settle(
      () => descriptors(app.pid),
      (n) => n <= baseline + 5,
      3000,
    );
    console.log(`http edge: ${baseline} descriptors before 300 upgrades, ${after} after`);
    expect(after).toBeLessThanOrEqual(baseline + 5);
  });
});

describe('timeouts', () => {
  test('a client sending its headers slowly is cut after the headers timeout with 408', async () => {
    const drip = ['GET /api/health HTTP/1.1\r\nHost: localhost\r\n', ...Array<string>(40).fill('X')];
    const result = await exchange(port, drip, { localAddress: '127.0.0.3', waitMs: 6000, gapMs: 100 });
    expect(result.response).toMatch(/^HTTP\/1\.1 408 /);
    expect(result.closedAfterMs).not.toBeNull();
    expect(result.closedAfterMs!).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
    expect(result.closedAfterMs!).toBeLessThan(HEADERS_TIMEOUT_MS + 1500);
  });

  test('a connection that never sends a byte is cut after the headers timeout', async () => {
    const result = await exchange(port, '', { localAddress: '127.0.0.3', waitMs: 6000 });
    expect(result.closedAfterMs).not.toBeNull();
    expect(result.closedAfterMs!).toBeLessThan(HEADERS_TIMEOUT_MS + 1500);
  });

  test('an idle kept-alive connection is closed after the keep-alive timeout', async () => {
    const request = 'GET /api/health HTTP/1.1\r\nHost: localhost\r\n\r\n';
    const result = await exchange(port, request, { localAddress: '127.0.0.3', waitMs: 6000 });
    expect(result.response).toMatch(/^HTTP\/1\.1 200 /);
    expect(result.closedAfterMs).not.toBeNull();
    expect(result.closedAfterMs!).toBeLessThan(KEEP_ALIVE_TIMEOUT_MS + 1500);
  });
});

describe('connection caps', () => {
  test("one address's connections beyond its share are refused at once; others are served; it recovers", async () => {
    const sockets = await Promise.all(
      Array.from({ length: PER_ADDRESS + 5 }, () => openIdle(port, '127.0.0.4')),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const closed = sockets.filter((s) => s.destroyed || s.readyState !== 'open').length;
    expect(closed).toBe(5);
    // Another address is served meanwhile.
    const other = await exchange(port, health, { localAddress: '127.0.0.5', waitMs: 3000 });
    expect(other.response).toMatch(/^HTTP\/1\.1 200 /);
    // A further connection of the crowded address is refused: closed without an answer.
    const refused = await exchange(port, health, { localAddress: '127.0.0.4', waitMs: 3000 });
    expect(refused.response).toBe('');
    expect(refused.closedAfterMs).not.toBeNull();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const recovered = await exchange(port, health, { localAddress: '127.0.0.4', waitMs: 3000 });
    expect(recovered.response).toMatch(/^HTTP\/1\.1 200 /);
  });

  test('connections beyond the total are refused from any address; it recovers', async () => {
    // Let kept-alive connections from earlier tests lapse, so the count starts from none.
    await new Promise((resolve) => setTimeout(resolve, KEEP_ALIVE_TIMEOUT_MS + 500));
    const sockets = await Promise.all(
      Array.from({ length: TOTAL }, (_, i) => openIdle(port, `127.0.2.${(i % 5) + 1}`)),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sockets.filter((s) => s.readyState !== 'open').length).toBe(0);
    const refused = await exchange(port, health, { localAddress: '127.0.0.6', waitMs: 3000 });
    expect(refused.response).toBe('');
    expect(refused.closedAfterMs).not.toBeNull();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const recovered = await exchange(port, health, { localAddress: '127.0.0.6', waitMs: 3000 });
    expect(recovered.response).toMatch(/^HTTP\/1\.1 200 /);
  });
});
