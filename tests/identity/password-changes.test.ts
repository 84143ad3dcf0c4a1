// Password changes cost password hashes, so they are bounded: RATE_LIMIT_PASSWORD_CHANGES per user
// per window (then 429 over_request_rate_limit with Retry-After, the password unchanged, other
// users unaffected); one caller's hashes beyond PASSWORD_HASHES_PER_CALLER running or waiting are
// refused with the same 429 at once; and no connection sits in an open transaction while a
// password is hashed.
import { pbkdf2 } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { signUp, type SignedIn } from '../support/workspaces.js';

async function changePassword(server: TestServer, user: SignedIn, password: string) {
  return call(server, 'PUT', '/auth/v1/user', {
    headers: { authorization: `Bearer ${user.accessToken}` },
    body: { password },
  });
}

async function signsIn(server: TestServer, user: SignedIn, password: string): Promise<boolean> {
  const res = await call(server, 'POST', '/auth/v1/token?grant_type=password', {
    body: { email: user.email, password },
  });
  return res.status === 200;
}

describe('RATE_LIMIT_PASSWORD_CHANGES', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ RATE_LIMIT_PASSWORD_CHANGES: '3' });
  });
  afterAll(async () => server?.close());

  test('a user past the limit gets 429 with Retry-After and keeps the password; others are unaffected', async () => {
    const user = await signUp(server, 'changer');
    for (const [i, password] of [
      'first new password',
      'second new password',
      'third new password',
    ].entries()) {
      expect([i, (await changePassword(server, user, password)).status]).toEqual([i, 200]);
    }
    const refused = await changePassword(server, user, 'fourth new password');
    expect(refused.status).toBe(429);
    expect(refused.body.error_code).toBe('over_request_rate_limit');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await signsIn(server, user, 'fourth new password')).toBe(false);
    expect(await signsIn(server, user, 'third new password')).toBe(true);
    // Metadata alone is not a password change, and another user has their own allowance.
    const metadata = await call(server, 'PUT', '/auth/v1/user', {
      headers: { authorization: `Bearer ${user.accessToken}` },
      body: { data: { theme: 'dark' } },
    });
    expect(metadata.status).toBe(200);
    const other = await signUp(server, 'other');
    expect((await changePassword(server, other, 'a new password')).status).toBe(200);
  });
});

describe('the password-hash queue', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      RATE_LIMIT_PASSWORD_CHANGES: '100000',
      PASSWORD_HASHES_PER_CALLER: '2',
      PASSWORD_HASH_CONCURRENCY: '1',
    });
  });
  afterAll(async () => server?.close());

  test("one caller's hashes beyond its share are refused at once with 429; the queue forgets it after", async () => {
    const user = await signUp(server, 'burst');
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => changePassword(server, user, `burst password ${i}`)),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    const refusals = answers.filter((a) => a.status === 429);
    expect(refusals.length).toBeGreaterThan(0);
    for (const refusal of refusals) expect(refusal.body.error_code).toBe('over_request_rate_limit');
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    expect(server.identity.deps.passwords.queue.stats()).toEqual({ running: 0, queued: 0, callers: 0 });
  });

  test('no transaction stays open while a password hash waits for a thread', async () => {
    const user = await signUp(server, 'quiet');
    // Every libuv thread kept busy, as under a burst of sign-ins: each hash now waits for one.
    let stop = false;
    const busy = Array.from({ length: 4 }, async () => {
      while (!stop) {
        await new Promise((resolve) => pbkdf2('busy', 'salt', 2_000_000, 32, 'sha256', resolve));
      }
    });
    let longestIdleMs = 0;
    try {
      for (let round = 0; round < 5; round++) {
        let done = false;
        const change = changePassword(server, user, `a quiet new password ${round}`).finally(() => {
          done = true;
        });
        while (!done) {
          const r = await server.pool.query<{ ms: number | null }>(
            `select max(extract(epoch from clock_timestamp() - state_change) * 1000)::float8 as ms
             from pg_stat_activity where datname = current_database() and state = 'idle in transaction'`,
          );
          longestIdleMs = Math.max(longestIdleMs, r.rows[0]!.ms ?? 0);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        expect((await change).status).toBe(200);
      }
    } finally {
      stop = true;
      await Promise.all(busy);
    }
    // Between two statements of a transaction a few milliseconds pass; a hash waits far longer.
    expect(longestIdleMs).toBeLessThan(250);
  });
});
