// The headers every API response carries (request id, CORS for browser apps, security headers)
// are set on the handler's own response, for answers and refusals alike, on /rest/v1 and /auth/v1.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

function expectApiHeaders(headers: Headers, requestId?: string) {
  if (requestId) expect(headers.get('x-request-id')).toBe(requestId);
  else expect(headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  expect(headers.get('access-control-allow-origin')).toBe('*');
  expect(headers.get('access-control-expose-headers')).toBe(
    'content-range,x-total-count,link,preference-applied,x-request-id,retry-after',
  );
  expect(headers.get('x-content-type-options')).toBe('nosniff');
  expect(headers.get('referrer-policy')).toBe('no-referrer');
}

test('a data-API list, a refusal and a token grant carry every API header', async () => {
  const signUp = await call(server, 'POST', '/auth/v1/signup', {
    body: { email: `headers-${Date.now()}@example.com`, password: 'correct horse battery' },
    headers: { 'x-request-id': 'sign-up-1' },
  });
  expect(signUp.status).toBe(200);
  expectApiHeaders(signUp.headers, 'sign-up-1');

  const token = (signUp.body as { access_token: string }).access_token;
  const list = await call(server, 'GET', '/rest/v1/projects?select=id&limit=5', {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(list.status).toBe(200);
  expect(list.body).toEqual([]);
  expect(list.headers.get('content-range')).toBe('*/*');
  expect(list.headers.get('content-type')).toMatch(/^application\/json/);
  expectApiHeaders(list.headers);

  const refused = await call(server, 'GET', '/rest/v1/no_such_table', {
    headers: { authorization: `Bearer ${token}`, 'x-request-id': 'x'.repeat(200) },
  });
  expect(refused.status).toBe(404);
  expectApiHeaders(refused.headers); // an overlong id is replaced by a fresh one

  const refresh = await call(server, 'POST', '/auth/v1/token?grant_type=refresh_token', {
    body: { refresh_token: 'not-a-real-refresh-token-at-all' },
  });
  expect(refresh.status).toBe(400);
  expectApiHeaders(refresh.headers);
});
