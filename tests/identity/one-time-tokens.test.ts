// The storage under every e-mail flow, against the real database: one-time tokens are single
// use, the latest only, expiring, bound to their type, stored as hashes (the code as a keyed
// hash), with wrong codes counted; PKCE flow states hand their code out once, to the verifier's
// holder only, within five minutes; the per-address e-mail frequency answers alike for everyone.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPool, type Pool } from '../../src/server/db/pool.js';
import { withService } from '../../src/server/db/transactions.js';
import { claimFrequencySlot, type AuthMailSettings } from '../../src/server/identity/mailer.js';
import { BUILT_IN_TEMPLATES } from '../../src/server/identity/mail-templates.js';
import {
  consumeByLinkToken,
  consumeByOtp,
  createOneTimeTokenKey,
  issueOneTimeToken,
  type IssueOptions,
} from '../../src/server/identity/one-time-tokens.js';
import {
  createFlowState,
  exchangeAuthCode,
  issueAuthCode,
  parsePkceParams,
  verifierMatches,
} from '../../src/server/identity/pkce.js';
import { createTestDatabase } from '../support/server.js';

let pool: Pool;
const key = createOneTimeTokenKey('a-test-secret-that-is-long-enough-for-hkdf');

beforeAll(async () => {
  pool = createPool(await createTestDatabase(), { max: 4 });
});
afterAll(async () => pool?.end());

let counter = 0;
async function newUser(): Promise<{ id: string; email: string }> {
  const email = `ott${++counter}-${Date.now()}@example.com`;
  const { rows } = await pool.query<{ id: string }>(
    'insert into auth.users (email) values ($1) returning id',
    [email],
  );
  return { id: rows[0]!.id, email };
}

const issue = (user: { id: string; email: string }, extra: Partial<IssueOptions> = {}) =>
  withService(pool, (tx) =>
    issueOneTimeToken(tx, key, {
      userId: user.id,
      type: 'confirmation_token',
      relatesTo: user.email,
      ttlSeconds: 3600,
      otpLength: 6,
      ...extra,
    }),
  );
const byLink = (token: string, types = ['confirmation_token'] as const) =>
  withService(pool, (tx) => consumeByLinkToken(tx, token, types, { pkceFlows: true }));
const byOtp = (address: string, otp: string, maxAttempts = 5) =>
  withService(pool, (tx) =>
    consumeByOtp(tx, key, { address, otp, maxAttempts, types: ['confirmation_token', 'recovery_token'] }),
  );

describe('one-time tokens', () => {
  test('a link works once, for its type only; tampered values find nothing', async () => {
    const user = await newUser();
    const token = await issue(user);
    expect(token.linkToken).toMatch(/^[0-9a-f]{56}$/);
    expect(token.otp).toMatch(/^\d{6}$/);
    expect(
      await withService(pool, (tx) =>
        consumeByLinkToken(tx, token.linkToken, ['recovery_token'], { pkceFlows: true }),
      ),
    ).toBeNull();
    const flipped = token.linkToken.slice(0, -1) + (token.linkToken.endsWith('0') ? '1' : '0');
    expect(await byLink(flipped)).toBeNull();
    expect(await byLink(token.linkToken.toUpperCase())).toBeNull();
    const consumed = await byLink(token.linkToken);
    expect(consumed).toMatchObject({ userId: user.id, type: 'confirmation_token', relatesTo: user.email });
    expect(await byLink(token.linkToken)).toBeNull();
  });

  test('only the latest token of a type works; another type lives alongside', async () => {
    const user = await newUser();
    const first = await issue(user);
    const recovery = await issue(user, { type: 'recovery_token' });
    const second = await issue(user);
    expect(await byLink(first.linkToken)).toBeNull();
    expect(await byOtp(user.email, first.otp === second.otp ? '-' : first.otp)).toEqual({ kind: 'wrong' });
    expect(await byLink(second.linkToken)).not.toBeNull();
    expect(
      await withService(pool, (tx) =>
        consumeByLinkToken(tx, recovery.linkToken, ['recovery_token'], { pkceFlows: true }),
      ),
    ).not.toBeNull();
  });

  test('an expired token is refused by link and by code', async () => {
    const user = await newUser();
    const token = await issue(user);
    await pool.query(
      `update auth.one_time_tokens set expires_at = now() - interval '1 second' where user_id = $1`,
      [user.id],
    );
    expect(await byLink(token.linkToken)).toBeNull();
    expect(await byOtp(user.email, token.otp)).toEqual({ kind: 'none' });
  });

  test('neither the link nor the code is stored; the code is a keyed hash, not a plain digest', async () => {
    const user = await newUser();
    const token = await issue(user);
    const { rows } = await pool.query<{ token_hash: Buffer; otp_hash: Buffer; row: string }>(
      `select token_hash, otp_hash, to_jsonb(t)::text as row from auth.one_time_tokens t where user_id = $1`,
      [user.id],
    );
    const row = rows[0]!;
    expect(row.row).not.toContain(token.linkToken);
    expect(row.row).not.toContain(token.otp);
    expect(row.token_hash.equals(createHash('sha256').update(token.linkToken).digest())).toBe(true);
    for (const guess of [token.otp, `${user.email}${token.otp}`, `${user.id}:${token.otp}`]) {
      expect(row.otp_hash.equals(createHash('sha256').update(guess).digest())).toBe(false);
    }
  });

  test('a code works once, for the address it was sent to', async () => {
    const user = await newUser();
    const other = await newUser();
    const token = await issue(user);
    expect(await byOtp(other.email, token.otp)).toEqual({ kind: 'none' });
    expect(await byOtp(user.email.toUpperCase(), token.otp)).toMatchObject({
      kind: 'verified',
      token: { userId: user.id },
    });
    expect(await byOtp(user.email, token.otp)).toEqual({ kind: 'none' });
  });

  test('wrong codes are counted; after the last allowed try the code is dead but the link still works', async () => {
    const user = await newUser();
    const token = await issue(user);
    const wrong = token.otp === '000000' ? '111111' : '000000';
    for (let i = 0; i < 3; i++) expect(await byOtp(user.email, wrong, 3)).toEqual({ kind: 'wrong' });
    const { rows } = await pool.query('select failed_attempts from auth.one_time_tokens where user_id = $1', [
      user.id,
    ]);
    expect(rows[0].failed_attempts).toBe(3);
    expect(await byOtp(user.email, token.otp, 3)).toEqual({ kind: 'none' });
    expect(await byLink(token.linkToken)).toMatchObject({ userId: user.id });
  });

  test('a token for a PKCE flow carries the pkce_ prefix', async () => {
    const user = await newUser();
    const flowStateId = await withService(pool, (tx) =>
      createFlowState(tx, {
        userId: user.id,
        challenge: { codeChallenge: 'x'.repeat(43), method: 'plain' },
        authenticationMethod: 'email/signup',
      }),
    );
    const token = await issue(user, { flowStateId });
    expect(token.linkToken).toMatch(/^pkce_[0-9a-f]{56}$/);
    expect(await byLink(token.linkToken)).toMatchObject({ flowStateId });
  });
});

describe('PKCE', () => {
  const verifier = 'a-verifier-with-enough-entropy-0123456789-abcdefghijklmnop';
  const s256 = createHash('sha256').update(verifier).digest('base64url');

  test('parameters are checked as GoTrue checks them', () => {
    expect(parsePkceParams(null, null)).toBeNull();
    expect(parsePkceParams(undefined, '')).toBeNull();
    expect(parsePkceParams(s256, 'S256')).toEqual({ codeChallenge: s256, method: 's256' });
    expect(() => parsePkceParams(s256, null)).toThrow(/requires code_challenge_method and code_challenge/);
    expect(() => parsePkceParams(null, 's256')).toThrow(/requires/);
    expect(() => parsePkceParams('short', 's256')).toThrow(/between 43 and 128/);
    expect(() => parsePkceParams('x'.repeat(129), 's256')).toThrow(/between 43 and 128/);
    expect(() => parsePkceParams(`${'x'.repeat(42)}!`, 's256')).toThrow(/can only contain/);
    expect(() => parsePkceParams(s256, 'md5')).toThrow(/unsupported code_challenge method/);
  });

  test('verifiers: S256 and plain', () => {
    expect(verifierMatches({ codeChallenge: s256, method: 's256' }, verifier)).toBe(true);
    expect(verifierMatches({ codeChallenge: s256, method: 's256' }, `${verifier}x`)).toBe(false);
    expect(verifierMatches({ codeChallenge: s256, method: 'plain' }, verifier)).toBe(false);
    expect(verifierMatches({ codeChallenge: verifier, method: 'plain' }, verifier)).toBe(true);
    expect(verifierMatches({ codeChallenge: verifier, method: 'plain' }, verifier.slice(1))).toBe(false);
  });

  async function flowWithCode(method: 'email/signup' | 'recovery' = 'email/signup') {
    const user = await newUser();
    const code = await withService(pool, async (tx) => {
      const id = await createFlowState(tx, {
        userId: user.id,
        challenge: { codeChallenge: s256, method: 's256' },
        authenticationMethod: method,
      });
      return issueAuthCode(tx, id);
    });
    return { user, code: code! };
  }
  const exchange = (code: string, v: string) => withService(pool, (tx) => exchangeAuthCode(tx, code, v));

  test('the code goes to the verifier holder, once; a wrong verifier does not burn it', async () => {
    const { user, code } = await flowWithCode('recovery');
    expect(code).toMatch(/^[0-9a-f-]{36}$/);
    const stored = await pool.query('select auth_code_hash from auth.flow_state where user_id = $1', [
      user.id,
    ]);
    expect(stored.rows[0].auth_code_hash.equals(createHash('sha256').update(code).digest())).toBe(true);
    await expect(exchange(code, 'wrong-verifier')).rejects.toMatchObject({
      status: 400,
      code: 'bad_code_verifier',
    });
    await expect(exchange(code, verifier)).resolves.toEqual({
      userId: user.id,
      authenticationMethod: 'recovery',
      pendingIdentity: null,
    });
    await expect(exchange(code, verifier)).rejects.toMatchObject({
      status: 404,
      code: 'flow_state_not_found',
    });
  });

  test('a code older than five minutes has expired; an unknown code is not found', async () => {
    const { user, code } = await flowWithCode();
    await pool.query(
      `update auth.flow_state set auth_code_issued_at = now() - interval '301 seconds' where user_id = $1`,
      [user.id],
    );
    await expect(exchange(code, verifier)).rejects.toMatchObject({ status: 422, code: 'flow_state_expired' });
    await expect(exchange(crypto.randomUUID(), verifier)).rejects.toMatchObject({
      code: 'flow_state_not_found',
    });
  });

  test('two exchanges of one code at once: exactly one session', async () => {
    const { code } = await flowWithCode();
    const results = await Promise.allSettled([exchange(code, verifier), exchange(code, verifier)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });
});

describe('e-mail frequency', () => {
  const settings: AuthMailSettings = {
    productName: 'Tenantry',
    siteUrl: 'https://app.example.com',
    templates: BUILT_IN_TEMPLATES,
    maxFrequencySeconds: 60,
    emailSentPerHour: 30,
    countEmailsSent: false,
    otpExpirySeconds: 3600,
  };
  const claim = (group: 'confirmation' | 'recovery', address: string) =>
    withService(pool, (tx) => claimFrequencySlot(tx, settings, group, address));

  test('one e-mail of a kind per address per minute, whether or not the address has an account', async () => {
    const address = `freq-${Date.now()}@example.com`;
    await claim('confirmation', address);
    await expect(claim('confirmation', address.toUpperCase())).rejects.toMatchObject({
      status: 429,
      code: 'over_email_send_rate_limit',
      message: expect.stringMatching(
        /^For security purposes, you can only request this after (59|60) seconds\.$/,
      ),
    });
    await claim('recovery', address);
    await claim('confirmation', `other-${address}`);
    await pool.query(`update internal.mail_frequency set sent_at = now() - interval '61 seconds'`);
    await claim('confirmation', address);
    const stored = await pool.query<{ row: string }>(
      'select to_jsonb(f)::text as row from internal.mail_frequency f',
    );
    expect(stored.rows.map((r) => r.row).join()).not.toContain('example.com');
  });
});
