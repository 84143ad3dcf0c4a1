// Long uploads: an accepted upload is bounded by its progress (STORAGE_UPLOAD_IDLE_TIMEOUT_MS), not
// by the whole-request timeout (HTTP_REQUEST_TIMEOUT_MS), so a large file on a slow link arrives
// whole; an upload that stalls is cut, and every other request's body (and an upload nobody
// accepted) must still arrive within the request timeout.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { exchange } from '../support/raw-http.js';
import { startStorageServer, storageFetch, type StorageTestServer } from './support.js';

const REQUEST_TIMEOUT_MS = 1000;
const IDLE_TIMEOUT_MS = 700;

let server: StorageTestServer;
let port: number;

beforeAll(async () => {
  server = await startStorageServer({
    HTTP_HEADERS_TIMEOUT_MS: '800',
    HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    STORAGE_UPLOAD_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
  });
  port = Number(new URL(server.url).port);
  await server.adminClient().storage.createBucket('slow');
});
afterAll(async () => server?.close());

/** A raw upload request whose body is sent in `parts`, one every gapMs. */
function upload(path: string, parts: string[], bearer: string | null): string[] {
  const length = parts.reduce((n, p) => n + Buffer.byteLength(p), 0);
  const head = [
    `POST /storage/v1/object/slow/${path} HTTP/1.1`,
    'Host: localhost',
    ...(bearer ? [`Authorization: Bearer ${bearer}`] : []),
    'Content-Type: text/plain',
    `Content-Length: ${length}`,
    'Connection: close',
    '',
    '',
  ].join('\r\n');
  return [head, ...parts];
}

test('an upload that trickles for longer than the request timeout but keeps moving arrives whole', async () => {
  // 16 pieces 200 ms apart: 3 s, three times the request timeout, never idle for 700 ms.
  const parts = Array.from({ length: 16 }, (_, i) => `piece-${String(i).padStart(2, '0')};`);
  const result = await exchange(port, upload('trickled.txt', parts, server.config.serviceRoleKey), {
    waitMs: 8000,
    gapMs: 200,
  });
  expect(result.response).toMatch(/^HTTP\/1\.1 200 /);
  expect(result.closedAfterMs!).toBeGreaterThan(3 * REQUEST_TIMEOUT_MS - 200);
  const stored = await storageFetch(server, 'GET', '/object/slow/trickled.txt');
  expect(await stored.text()).toBe(parts.join(''));
});

test('a resumable chunk that trickles for longer than the request timeout is kept whole', async () => {
  const parts = Array.from({ length: 16 }, (_, i) => `chunk-${String(i).padStart(2, '0')};`);
  const length = parts.join('').length;
  const created = await fetch(`${server.url}/storage/v1/upload/resumable`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${server.config.serviceRoleKey}`,
      'tus-resumable': '1.0.0',
      'upload-length': String(length),
      'upload-metadata': `bucketName ${Buffer.from('slow').toString('base64')},objectName ${Buffer.from('chunked.txt').toString('base64')}`,
    },
  });
  expect(created.status).toBe(201);
  const location = new URL(created.headers.get('location')!);
  const head = [
    `PATCH ${location.pathname} HTTP/1.1`,
    'Host: localhost',
    `Authorization: Bearer ${server.config.serviceRoleKey}`,
    'Tus-Resumable: 1.0.0',
    'Content-Type: application/offset+octet-stream',
    'Upload-Offset: 0',
    `Content-Length: ${length}`,
    'Connection: close',
    '',
    '',
  ].join('\r\n');
  const result = await exchange(port, [head, ...parts], { waitMs: 8000, gapMs: 200 });
  expect(result.response).toMatch(/^HTTP\/1\.1 204 /);
  expect(result.response).toMatch(new RegExp(`Upload-Offset: ${length}`, 'i'));
  const stored = await storageFetch(server, 'GET', '/object/slow/chunked.txt');
  expect(await stored.text()).toBe(parts.join(''));
});

test('an upload that stalls is cut after the idle timeout and leaves nothing', async () => {
  const before = await server.storedCount();
  // Two pieces, then nothing: the rest of the declared length never comes.
  const request = upload('stalled.txt', ['first;', 'second;', 'never sent'], server.config.serviceRoleKey);
  request.pop();
  const result = await exchange(port, request, { waitMs: 6000, gapMs: 100 });
  expect(result.closedAfterMs).not.toBeNull();
  expect(result.closedAfterMs!).toBeGreaterThan(IDLE_TIMEOUT_MS);
  expect(result.closedAfterMs!).toBeLessThan(IDLE_TIMEOUT_MS + 2000);
  expect(result.response).not.toMatch(/^HTTP\/1\.1 200 /);
  expect((await storageFetch(server, 'GET', '/object/slow/stalled.txt')).status).toBe(400);
  expect(await server.storedCount()).toBe(before);
});

test('any other body is still held to the request timeout, with 408', async () => {
  const body = JSON.stringify({ id: 'never-made', name: 'never-made' });
  const request = [
    [
      'POST /storage/v1/bucket HTTP/1.1',
      'Host: localhost',
      `Authorization: Bearer ${server.config.serviceRoleKey}`,
      'Content-Type: application/json',
      `Content-Length: ${body.length}`,
      '',
      '',
    ].join('\r\n'),
    ...body.split(''),
  ];
  // One character every 200 ms keeps the connection busy, but the body would take 8 s.
  const result = await exchange(port, request, { waitMs: 6000, gapMs: 200 });
  expect(result.response).toMatch(/^HTTP\/1\.1 408 /);
  expect(result.closedAfterMs!).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
  expect(result.closedAfterMs!).toBeLessThan(REQUEST_TIMEOUT_MS + 1500);
  expect((await server.adminClient().storage.getBucket('never-made')).error).toBeTruthy();
});

test('an upload nobody accepted (no right to write) is held to the request timeout too', async () => {
  // Refused before its body is read: answered at once and closed, never left to trickle.
  const parts = Array.from({ length: 16 }, () => 'x'.repeat(10));
  const result = await exchange(port, upload('refused.txt', parts, server.config.projectApiKey), {
    waitMs: 6000,
    gapMs: 200,
  });
  expect(result.response).toMatch(/^HTTP\/1\.1 400 /);
  expect(result.response).toContain('"statusCode":"403"');
  expect(result.closedAfterMs!).toBeLessThan(REQUEST_TIMEOUT_MS + 500);
});
