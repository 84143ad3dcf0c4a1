// Password guessing is slowed by failures per e-mail and client address, with growing waits,
// and a stranger failing sign-ins for someone's e-mail can never lock its owner out. Client
// addresses are varied through X-Forwarded-For (TRUST_PROXY on, as behind the operator's proxy).
import { createClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import ws from 'ws';
import { call, startTestServer, type TestServer } from '../support/server.js';

const PASSWORD = 'correct horse battery';
let server: TestServer;
let underAttack: TestServer;
beforeAll(async () => {
  // Defaults: 5 free failures per address, waits from 1 s doubling, 100 failures per e-mail.
  server = await startTestServer({ TRUST_PROXY: 'true' });
  underAttack = await startTestServer({
    TRUST_PROXY: 'true',
    RATE_LIMIT_SIGNIN_PER_EMAIL: '20',
    RATE_LIMIT_SIGNIN_BACKOFF: '30',
  });
});
afterAll(async () => {
  await server?.close();
  await underAttack?.close();
});

let counter = 0;
async function newAccount(on: TestServer = server): Promise<string> {
  const email = `backoff${++counter}-${Date.now()}@example.com`;
  const res = await call(on, 'POST', '/auth/v1/signup', { body: { email, password: PASSWORD } });
  expect(res.status).toBe(200);
  return email;
}

/** A password grant over raw HTTP from the given client address (so Retry-After can be read). */
function guess(email: string, password: string, address: string, on: TestServer = server) {
  return call(on, 'POST', '/auth/v1/token?grant_type=password', {
    body: { email, password },
    headers: { 'x-forwarded-for': address },
  });
}

/** The owner signing in with supabase-js, as an application would, from the given address. */
function ownerSignIn(email: string, address: string, on: TestServer = server) {
  const supabase = createClient(on.url, on.config.projectApiKey, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    global: { headers: { 'x-forwarded-for': address } },
    realtime: { transport: ws as unknown as typeof WebSocket },
  });
  return supabase.auth.signInWithPassword({ email, password: PASSWORD });
}

/** Ends an address's current wait in the database, instead of sleeping through it. */
async function endWait(email: string, address: string): Promise<void> {
  await server.pool.query(
    `update internal.sign_in_failures set blocked_until = now() where email = $1 and address = $2`,
    [email, address],
  );
}

describe('failures per e-mail and address', () => {
  test('ten wrong passwords from one address do not lock the owner out from another', async () => {
    const email = await newAccount();
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await guess(email, 'wrong password', '203.0.113.1')).status);
    expect(statuses).toEqual([400, 400, 400, 400, 400, 429, 429, 429, 429, 429, 429, 429]);

    const owner = await ownerSignIn(email, '198.51.100.7');
    expect(owner.error).toBeNull();
    expect(owner.data.session?.user.email).toBe(email);
  });

  test('an address that keeps failing waits twice as long each time; then the owner signs in from it', async () => {
    const email = await newAccount();
    const address = '203.0.113.2';
    const waits: number[] = [];
    let failures = 0;
    while (failures < 10) {
      const res = await guess(email, 'wrong password', address);
      if (res.status === 429) {
        expect(res.body.error_code).toBe('over_request_rate_limit');
        waits.push(Number(res.headers.get('retry-after')));
        await endWait(email, address);
      } else {
        expect(res.status).toBe(400);
        expect(res.body.error_code).toBe('invalid_credentials');
        failures++;
      }
    }
    expect(waits).toEqual([1, 2, 4, 8, 16]);
    // Still waiting after the tenth failure: even the right password has to wait here.
    const waiting = await guess(email, PASSWORD, address);
    expect(waiting.status).toBe(429);
    expect(Number(waiting.headers.get('retry-after'))).toBe(32);
    expect(waiting.body.msg).toBe('Too many sign-in attempts; try again in 32 seconds');

    await endWait(email, address);
    const owner = await ownerSignIn(email, address);
    expect(owner.error).toBeNull();
    // The sign-in cleared this address's failures: the next mistake is an ordinary one.
    expect((await guess(email, 'wrong password', address)).status).toBe(400);
    const left = await server.pool.query(
      `select failures from internal.sign_in_failures where email = $1 and address = $2`,
      [email, address],
    );
    expect(left.rows).toEqual([{ failures: 1 }]);
  });

  test('the wait really ends: after it the owner signs in from the same address', async () => {
    const email = await newAccount();
    const address = '203.0.113.3';
    for (let i = 0; i < 5; i++) expect((await guess(email, 'wrong password', address)).status).toBe(400);
    const refused = await ownerSignIn(email, address);
    expect(refused.error?.status).toBe(429);
    expect(refused.error?.code).toBe('over_request_rate_limit');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const owner = await ownerSignIn(email, address);
    expect(owner.error).toBeNull();
  });

  test('concurrent guesses cannot slip past the backoff', async () => {
    const email = await newAccount();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => guess(email, 'wrong password', '203.0.113.4')),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 400)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
  });

  test('an unknown e-mail is treated exactly like a known one', async () => {
    const unknown = `nobody-${Date.now()}@example.com`;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await guess(unknown, 'wrong password', '203.0.113.5')).status);
    expect(statuses).toEqual([400, 400, 400, 400, 400, 429]);
    const codes = await guess(unknown, 'wrong password', '203.0.113.6');
    expect(codes.body.error_code).toBe('invalid_credentials');
  });

  test('a right password that cannot sign in (unconfirmed) does not count as a failure', async () => {
    const email = `unconfirmed-${Date.now()}@example.com`;
    const admin = server.adminClient().auth.admin;
    expect((await admin.createUser({ email, password: PASSWORD })).error).toBeNull();
    for (let i = 0; i < 12; i++) {
      const res = await guess(email, PASSWORD, '203.0.113.7');
      expect(res.body.error_code).toBe('email_not_confirmed');
    }
  });
});

describe('failures per e-mail across addresses', () => {
  test('many failures from everywhere slow every guesser but never refuse the owner', async () => {
    const email = await newAccount(underAttack);
    const addresses = Array.from({ length: 25 }, (_, i) => `192.0.2.${i + 1}`);
    for (const address of addresses) {
      expect((await guess(email, 'wrong password', address, underAttack)).status).toBe(400);
    }
    // From the 20th failure on, an address that failed once must wait before guessing again.
    const again = await Promise.all(
      addresses.map((address) => guess(email, 'wrong password', address, underAttack)),
    );
    expect(again.slice(0, 19).every((r) => r.status === 400)).toBe(true);
    expect(again.slice(19).every((r) => r.status === 429)).toBe(true);
    expect(Number(again[24]!.headers.get('retry-after'))).toBeGreaterThan(0);
    // A fresh address still gets its guess, and the owner still signs in.
    expect((await guess(email, 'wrong password', '192.0.2.200', underAttack)).status).toBe(400);
    const owner = await ownerSignIn(email, '198.51.100.9', underAttack);
    expect(owner.error).toBeNull();
  });
});
