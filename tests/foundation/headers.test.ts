// Every platform response carries a request id and security headers; the client-facing APIs
// answer CORS preflights so browser apps on other origins can use supabase-js.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

test('request id: generated, or echoed when the caller sends one', async () => {
  const generated = await call(server, 'GET', '/api/health', { apikey: null });
  expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  const echoed = await call(server, 'GET', '/api/health', {
    apikey: null,
    headers: { 'x-request-id': 'trace-123' },
  });
  expect(echoed.headers.get('x-request-id')).toBe('trace-123');
});

test('security headers on API responses', async () => {
  const res = await call(server, 'GET', '/auth/v1/health');
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
  expect(res.headers.get('strict-transport-security')).toContain('max-age=');
  expect(res.headers.get('referrer-policy')).toBe('no-referrer');
});

test('CORS preflight for supabase-js headers on /auth/v1 and /rest/v1', async () => {
  for (const path of ['/auth/v1/token?grant_type=password', '/rest/v1/projects']) {
    const res = await fetch(server.url + path, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'apikey, authorization, content-type, x-client-info',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-headers')).toContain('apikey');
  }
});
