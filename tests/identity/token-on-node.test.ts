// POST /auth/v1/token is served on node:http directly (token-endpoint.ts), as the data API is. What
// must not change with that: every API header of the Hono-served identity routes, GoTrue's error
// shape, the body's size cap, CORS preflights, and the same answers through the Hono app.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createLogger } from '../../src/server/logger.js';
import { createPlatform } from '../../src/server/platform.js';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { signUp } from '../support/workspaces.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

const isApiHeader = (name: string) =>
  /^(x-(?!request-id|sb-error-code)|strict-transport-security|referrer-policy|origin-agent-cluster|cross-origin-|permissions-policy|access-control-)/.test(
    name,
  );
const apiHeaders = (headers: Headers) =>
  Object.fromEntries([...headers.entries()].filter(([name]) => isApiHeader(name)).sort());

test('a grant and a refused grant carry the same API headers as the other identity routes', async () => {
  const person = await signUp(server, 'token-headers');
  const health = await call(server, 'GET', '/auth/v1/health');
  const granted = await call(server, 'POST', '/auth/v1/token?grant_type=refresh_token', {
    headers: { 'x-request-id': 'grant-42' },
    body: { refresh_token: person.refreshToken },
  });
  expect(granted.status).toBe(200);
  expect(granted.body).toMatchObject({ token_type: 'bearer', user: { id: person.id } });
  expect(granted.headers.get('content-type')).toMatch(/^application\/json/);
  expect(granted.headers.get('x-request-id')).toBe('grant-42');
  expect(Object.keys(apiHeaders(health.headers)).length).toBeGreaterThanOrEqual(10);
  expect(apiHeaders(granted.headers)).toEqual(apiHeaders(health.headers));

  const refused = await call(server, 'POST', '/auth/v1/token?grant_type=password', {
    body: { email: person.email, password: 'not the password' },
  });
  expect(refused.status).toBe(400);
  expect(refused.body).toEqual({
    code: 400,
    error_code: 'invalid_credentials',
    msg: 'Invalid login credentials',
    error: 'invalid_grant',
    error_description: 'Invalid login credentials',
  });
  expect(refused.headers.get('x-sb-error-code')).toBe('invalid_credentials');
  expect(refused.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  expect(apiHeaders(refused.headers)).toEqual(apiHeaders(health.headers));
});

test('the apikey, the grant type and the body are checked before anything else', async () => {
  const noKey = await call(server, 'POST', '/auth/v1/token?grant_type=refresh_token', {
    apikey: null,
    body: { refresh_token: 'x' },
  });
  expect(noKey.status).toBe(401);
  const unknown = await call(server, 'POST', '/auth/v1/token?grant_type=client_credentials', { body: {} });
  expect(unknown.status).toBe(400);
  expect(unknown.body.error_code).toBe('unsupported_grant_type');
  const malformed = await call(server, 'POST', '/auth/v1/token?grant_type=refresh_token', {
    rawBody: '{"refresh',
  });
  expect(malformed.status).toBe(400);
  expect(malformed.body.error_code).toBe('bad_json');
  const missing = await call(server, 'POST', '/auth/v1/token?grant_type=refresh_token', { body: {} });
  expect(missing.status).toBe(400);
  expect(missing.body).toMatchObject({
    error_code: 'validation_failed',
    msg: 'refresh_token: missing refresh_token',
  });
  const web3 = await call(server, 'POST', '/auth/v1/token?grant_type=web3', { body: {} });
  expect(web3.status).toBe(422);
  expect(web3.body.error_code).toBe('web3_provider_disabled');
});

test('a body over the cap is refused with 413 and the connection closed', async () => {
  const big = Buffer.alloc(1024 * 1024 + 10, 0x20);
  const answer = await new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
    const url = new URL(server.url);
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: '/auth/v1/token?grant_type=refresh_token',
        method: 'POST',
        headers: {
          apikey: server.config.projectApiKey,
          'content-type': 'application/json',
          'transfer-encoding': 'chunked',
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error),
    );
    req.write(big);
    req.end();
  });
  expect(answer).toEqual({ status: 413, connection: 'close' });
});

test('CORS preflights and other methods still reach the identity routes', async () => {
  const preflight = await call(server, 'OPTIONS', '/auth/v1/token?grant_type=refresh_token', {
    headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
  });
  expect(preflight.status).toBe(204);
  expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
  expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
  // Another method reaches the identity routes too, which serve /token for POST only.
  const get = await call(server, 'GET', '/auth/v1/token?grant_type=refresh_token');
  expect(get.status).toBe(405);
  expect(get.headers.get('allow')).toBe('POST');
});

test('the Hono app answers a grant as the node:http listener does', async () => {
  const person = await signUp(server, 'token-in-process');
  const { app } = createPlatform({
    config: server.config,
    pool: server.pool,
    logger: createLogger('silent'),
  });
  const response = await app.request('/auth/v1/token?grant_type=refresh_token', {
    method: 'POST',
    headers: { apikey: server.config.projectApiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ refresh_token: person.refreshToken }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { user: { id: string }; refresh_token: string };
  expect(body.user.id).toBe(person.id);
  // the token it issued is the session's live one, as the listener's would be
  const next = await call(server, 'POST', '/auth/v1/token?grant_type=refresh_token', {
    body: { refresh_token: body.refresh_token },
  });
  expect(next.status).toBe(200);
  const refused = await app.request('/auth/v1/token?grant_type=password', {
    method: 'POST',
    headers: { apikey: server.config.projectApiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ email: person.email, password: 'not the password' }),
  });
  expect(refused.status).toBe(400);
  expect(refused.headers.get('x-sb-error-code')).toBe('invalid_credentials');
});
