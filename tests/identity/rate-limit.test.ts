// Rate limits live in Postgres, so they hold across instances: two servers on one database
// share the same counters.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { secondsIntoWindow, secondsIntoWindowAwayFromEnd } from '../support/rate-windows.js';
import { call, startTestServer, type TestServer } from '../support/server.js';

const limits = {
  RATE_LIMIT_SIGNIN_FAILURES: '3',
  RATE_LIMIT_SIGNIN_PER_ADDRESS: '1000',
  RATE_LIMIT_REFRESH_PER_SESSION: '4',
  RATE_LIMIT_SIGNUP_PER_ADDRESS: '1000',
  TRUST_PROXY: 'true',
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

test('failed password grants from one address are counted across instances, with 429 and Retry-After', async () => {
  const email = `limited-${Date.now()}@example.com`;
  await call(a, 'POST', '/auth/v1/signup', { body: { email, password: 'correct horse battery' } });
  const from = (address: string) => ({ 'x-forwarded-for': address });
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    const server = i % 2 === 0 ? a : b;
    const res = await call(server, 'POST', '/auth/v1/token?grant_type=password', {
      body: { email, password: 'wrong password' },
      headers: from('203.0.113.10'),
    });
    statuses.push(res.status);
    if (res.status === 429) {
      expect(res.body.error_code).toBe('over_request_rate_limit');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  }
  expect(statuses).toEqual([400, 400, 400, 429]);
  // That address waits, whatever it sends; every other address signs in as usual.
  const waiting = await call(a, 'POST', '/auth/v1/token?grant_type=password', {
    body: { email, password: 'correct horse battery' },
    headers: from('203.0.113.10'),
  });
  expect(waiting.status).toBe(429);
  const elsewhere = await call(b, 'POST', '/auth/v1/token?grant_type=password', {
    body: { email, password: 'correct horse battery' },
    headers: from('198.51.100.10'),
  });
  expect(elsewhere.status).toBe(200);
});

test('password grants per address are limited in total, right or wrong', async () => {
  const c = await startTestServer({ ...limits, RATE_LIMIT_SIGNIN_PER_ADDRESS: '3' });
  try {
    const email = `total-${Date.now()}@example.com`;
    await call(c, 'POST', '/auth/v1/signup', { body: { email, password: 'correct horse battery' } });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await call(c, 'POST', '/auth/v1/token?grant_type=password', {
        body: { email, password: 'correct horse battery' },
        headers: { 'x-forwarded-for': '203.0.113.11' },
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  } finally {
    await c.close();
  }
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
  const live = await a.pool.query(
    `select 1 from auth.sessions where refresh_token_hash = sha256(convert_to($1, 'utf8'))`,
    [token],
  );
  expect(live.rowCount).toBe(1);
});

test("a session's grants of the previous window still weigh in the next one", async () => {
  const window = 3600;
  const c = await startTestServer({ ...limits, RATE_LIMIT_WINDOW: String(window) });
  try {
    const signUp = await call(c, 'POST', '/auth/v1/signup', {
      body: { email: `sliding-${Date.now()}@example.com`, password: 'correct horse battery' },
    });
    // Clear of the window's end, so the figures below stay in this window.
    await secondsIntoWindowAwayFromEnd(c.pool, window, 60);
    // 400 grants in the previous window (of a limit of 4): they weigh 400 * (1 - f) until they
    // fade to 3, at f = 397/400 of this window, whereas fixed windows would start again at 0.
    await c.pool.query(
      `update auth.sessions
       set refresh_window_start = to_timestamp(floor(extract(epoch from now()) / $2) * $2),
           refresh_previous_count = 400, refresh_count = 0
       where user_id = $1`,
      [(signUp.body.user as { id: string }).id, window],
    );
    const refused = await call(c, 'POST', '/auth/v1/token?grant_type=refresh_token', {
      body: { refresh_token: signUp.body.refresh_token },
    });
    expect(refused.status).toBe(429);
    const expected = (397 / 400) * window - (await secondsIntoWindow(c.pool, window));
    expect(Math.abs(Number(refused.headers.get('retry-after')) - expected)).toBeLessThanOrEqual(2);
  } finally {
    await c.close();
  }
});

test('password grants of an address in the previous window still weigh', async () => {
  const email = `weighed-${Date.now()}@example.com`;
  await call(a, 'POST', '/auth/v1/signup', { body: { email, password: 'correct horse battery' } });
  // Far more than the limit (1000) in the previous window of 300 s: they weigh until its very end.
  await a.pool.query(
    `insert into internal.rate_limits (bucket, window_start, hits)
     values ('signin:ip:203.0.113.12', to_timestamp(floor(extract(epoch from now()) / 300) * 300 - 300), 10000000)`,
  );
  const res = await call(a, 'POST', '/auth/v1/token?grant_type=password', {
    body: { email, password: 'correct horse battery' },
    headers: { 'x-forwarded-for': '203.0.113.12' },
  });
  expect(res.status).toBe(429);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
});
