// Rate limits live in Postgres, so they hold across instances: two servers on one database
// share the same counters.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';

const limits = {
  RATE_LIMIT_SIGNIN_PER_EMAIL: '3',
  RATE_LIMIT_SIGNIN_PER_ADDRESS: '1000',
  RATE_LIMIT_REFRESH_PER_SESSION: '4',
  RATE_LIMIT_SIGNUP_PER_ADDRESS: '1000',
};
let a: TestServer;
let b: TestServer;
beforeAll(async () => {
  a = await startTestServer(limits);
  b = await startTestServer({
    ...limits,
    DATABASE_URL: a.config.databaseUrl!,
    JWT_SECRET: a.config.jwtSecret,
    PROJECT_API_KEY: a.config.projectApiKey,
    SERVICE_ROLE_KEY: a.config.serviceRoleKey,
  });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

test('password grants per e-mail are limited across instances, with 429 and Retry-After', async () => {
  const email = `limited-${Date.now()}@example.com`;
  await call(a, 'POST', '/auth/v1/signup', { body: { email, password: 'correct horse battery' } });
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    const server = i % 2 === 0 ? a : b;
    const res = await call(server, 'POST', '/auth/v1/token?grant_type=password', {
      body: { email, password: 'wrong password' },
    });
    statuses.push(res.status);
    if (res.status === 429) {
      expect(res.body.error_code).toBe('over_request_rate_limit');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  }
  expect(statuses).toEqual([400, 400, 400, 429]);
  // Even the right password is refused while the limit holds.
  const right = await call(b, 'POST', '/auth/v1/token?grant_type=password', {
    body: { email, password: 'correct horse battery' },
  });
  expect(right.status).toBe(429);
  // Other e-mail addresses are unaffected.
  const other = `other-${Date.now()}@example.com`;
  await call(a, 'POST', '/auth/v1/signup', { body: { email: other, password: 'correct horse battery' } });
  const ok = await call(b, 'POST', '/auth/v1/token?grant_type=password', {
    body: { email: other, password: 'correct horse battery' },
  });
  expect(ok.status).toBe(200);
});

test('refresh grants per session are limited', async () => {
  const email = `refresh-${Date.now()}@example.com`;
  const signUp = await call(a, 'POST', '/auth/v1/signup', {
    body: { email, password: 'correct horse battery' },
  });
  let token = signUp.body.refresh_token as string;
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await call(i % 2 ? a : b, 'POST', '/auth/v1/token?grant_type=refresh_token', {
      body: { refresh_token: token },
    });
    statuses.push(res.status);
    if (res.status === 200) token = res.body.refresh_token as string;
  }
  expect(statuses).toEqual([200, 200, 200, 200, 429]);
  // The refused attempt did not rotate: the last issued token is still the live one.
  const live = await a.pool.query<{ revoked: boolean }>(
    `select revoked from auth.refresh_tokens where token_hash = sha256(convert_to($1, 'utf8'))`,
    [token],
  );
  expect(live.rows).toEqual([{ revoked: false }]);
});
