// A password sign-in costs the database as little as possible beside the hash: one prepared
// statement before it (the attempt counted, the user read) and, when the password is right, one
// after it (the session opened, the failures cleared, the audit log's line written); a wrong one
// is followed by the audit log's line of the failure. Prepared statements are parsed and planned
// once per connection; planning the user's JSON subqueries cost more than running them.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { statementsDuring as sentDuring } from '../support/statements.js';

const PASSWORD = 'correct horse battery';
let server: TestServer;
let email: string;
beforeAll(async () => {
  server = await startTestServer();
  email = `round-trips-${Date.now()}@example.com`;
  const res = await call(server, 'POST', '/auth/v1/signup', { body: { email, password: PASSWORD } });
  expect(res.status).toBe(200);
});
afterAll(async () => server?.close());

/** Every statement the server's connections run while fn runs, with the name it is prepared under. */
const statementsDuring = (fn: () => Promise<void>) => sentDuring(server.pool, fn);

test('a password sign-in is two prepared statements: the attempt with the user, then the session', async () => {
  for (let i = 0; i < 3; i++) {
    let signedIn = false;
    const statements = await statementsDuring(async () => {
      const { data, error } = await server.client().auth.signInWithPassword({ email, password: PASSWORD });
      expect(error).toBeNull();
      signedIn = data.session !== null && data.user?.email === email;
    });
    expect(signedIn).toBe(true);
    expect(statements.map((s) => s.name)).toEqual(['internal.begin_password_sign_in', 'auth.open_session']);
    expect(statements[0]!.text).toMatch(/internal\.begin_password_sign_in\(/);
    expect(statements[1]!.text).toMatch(/insert into auth\.sessions/);
  }
});

test('a wrong password and an unknown e-mail are the same one prepared statement', async () => {
  for (const [who, password] of [
    [email, 'wrong password'],
    [`nobody-${Date.now()}@example.com`, PASSWORD],
  ] as const) {
    let status = 0;
    const statements = await statementsDuring(async () => {
      const res = await call(server, 'POST', '/auth/v1/token?grant_type=password', {
        body: { email: who, password },
      });
      status = res.status;
      expect(res.body.error_code).toBe('invalid_credentials');
    });
    expect(status).toBe(400);
    // the attempt, then the failure's line in the security audit log (its own statement: nothing
    // else changed), alike for both
    expect(statements.map((s) => s.name)).toEqual(['internal.begin_password_sign_in', 'audit.record']);
  }
  // The wrong password was counted, and the right one still signs in (and clears it).
  const { error } = await server.client().auth.signInWithPassword({ email, password: PASSWORD });
  expect(error).toBeNull();
  const left = await server.pool.query(
    'select failures from internal.sign_in_failures where email = $1 and address <> $2',
    [email, '*'],
  );
  expect(left.rows).toEqual([]);
});
