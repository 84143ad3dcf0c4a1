// A session keeps its refresh-token chain in its own row: a token names its session, a grant is
// one heap-only update of that row, an older token of the chain is still recognised as reuse (and
// ends the session), a guessed token naming a session changes nothing, and tokens issued before
// the chain moved into the session row keep working (with their reuse recognised too). Tracing a
// token back is limited per client address.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  createRefreshTokenKey,
  descendantHashes,
  REUSE_DETECTION_GENERATIONS,
} from '../../src/server/identity/refresh-tokens.js';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { signUp } from '../support/workspaces.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

const signedIn = () => signUp(server, 'chain');

async function refresh(token: string) {
  return server.client().auth.refreshSession({ refresh_token: token });
}

async function sessionCountOn(on: TestServer, userId: string): Promise<number> {
  const result = await on.pool.query('select 1 from auth.sessions where user_id = $1', [userId]);
  return result.rowCount ?? 0;
}
const sessionCount = (userId: string) => sessionCountOn(server, userId);

function sessionIdOf(token: string): string {
  const hex = Buffer.from(token.slice(0, 22), 'base64url').toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

test('a refresh token names its session, and a grant rewrites only that row, heap-only', async () => {
  const session = await signedIn();
  const { rows } = await server.pool.query<{ id: string }>(
    'select id from auth.sessions where user_id = $1',
    [session.id],
  );
  expect(sessionIdOf(session.refreshToken)).toBe(rows[0]!.id);

  const before = await server.pool.query<{ n: string }>('select count(*) as n from auth.refresh_tokens');
  let token = session.refreshToken;
  for (let i = 0; i < 3; i++) {
    const next = await refresh(token);
    expect(next.error).toBeNull();
    token = next.data.session!.refresh_token;
    expect(sessionIdOf(token)).toBe(rows[0]!.id);
  }
  const after = await server.pool.query<{ n: string }>('select count(*) as n from auth.refresh_tokens');
  expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
});

test('an older token of the chain is reuse: the whole session ends', async () => {
  const session = await signedIn();
  const tokens = [session.refreshToken];
  for (let i = 0; i < 4; i++) {
    const next = await refresh(tokens.at(-1)!);
    expect(next.error).toBeNull();
    tokens.push(next.data.session!.refresh_token);
  }
  // The grandparent of the active token: neither the active token nor its parent.
  const stale = await refresh(tokens[2]!);
  expect(stale.error?.status).toBe(400);
  expect(stale.error?.code).toBe('refresh_token_already_used');
  expect(await sessionCount(session.id)).toBe(0);
  const holder = await refresh(tokens[4]!);
  expect(holder.error?.code).toBe('refresh_token_not_found');
});

test('a guessed token naming a live session is not found and ends nothing', async () => {
  const session = await signedIn();
  const guess = session.refreshToken.slice(0, 22) + randomBytes(32).toString('base64url');
  const res = await refresh(guess);
  expect(res.error?.status).toBe(400);
  expect(res.error?.code).toBe('refresh_token_not_found');
  expect(await sessionCount(session.id)).toBe(1);
  const holder = await refresh(session.refreshToken);
  expect(holder.error).toBeNull();
});

test(`reuse is recognised while the active token or its parent is at most ${REUSE_DETECTION_GENERATIONS} generations later`, async () => {
  const key = createRefreshTokenKey(server.config.jwtSecret);
  for (const [generations, reused] of [
    [REUSE_DETECTION_GENERATIONS, true],
    [REUSE_DETECTION_GENERATIONS + 1, true],
    [REUSE_DETECTION_GENERATIONS + 2, false],
  ] as const) {
    const session = await signedIn();
    const sessionId = sessionIdOf(session.refreshToken);
    // The session's chain as it stands after that many grants.
    const chain = descendantHashes(key, session.refreshToken, sessionId, generations);
    await server.pool.query(
      `update auth.sessions set refresh_token_hash = $2, refresh_parent_hash = $3 where id = $1`,
      [sessionId, chain.at(-1), chain.at(-2)],
    );
    const res = await refresh(session.refreshToken);
    expect(res.error?.code).toBe(reused ? 'refresh_token_already_used' : 'refresh_token_not_found');
    expect(await sessionCount(session.id)).toBe(reused ? 0 : 1);
  }
});

test('a token issued before the chain moved into the session row still rotates; its reuse ends the session', async () => {
  const session = await signedIn();
  const { rows } = await server.pool.query<{ id: string }>(
    'select id from auth.sessions where user_id = $1',
    [session.id],
  );
  const sessionId = rows[0]!.id;
  // The state migration 0034 leaves behind: the old tokens in auth.refresh_tokens, the live one
  // also in the session row.
  const older = randomBytes(32).toString('base64url');
  const live = randomBytes(32).toString('base64url');
  await server.pool.query(
    `with parent as (
       insert into auth.refresh_tokens (token_hash, session_id, user_id, revoked)
       values (sha256(convert_to($1, 'utf8')), $3, $4, true) returning id
     )
     insert into auth.refresh_tokens (token_hash, session_id, user_id, parent_id)
     select sha256(convert_to($2, 'utf8')), $3, $4, id from parent`,
    [older, live, sessionId, session.id],
  );
  await server.pool.query(
    `update auth.sessions set refresh_token_hash = sha256(convert_to($1, 'utf8')),
       refresh_parent_hash = sha256(convert_to($2, 'utf8')), refresh_rotated_at = now()
     where id = $3`,
    [live, older, sessionId],
  );

  const rotated = await refresh(live);
  expect(rotated.error).toBeNull();
  const child = rotated.data.session!.refresh_token;
  expect(sessionIdOf(child)).toBe(sessionId);
  // The old-style parent within the reuse interval: the same child.
  const retry = await refresh(live);
  expect(retry.error).toBeNull();
  expect(retry.data.session!.refresh_token).toBe(child);
  // An older old-style token: reuse.
  const stale = await refresh(older);
  expect(stale.error?.code).toBe('refresh_token_already_used');
  expect(await sessionCount(session.id)).toBe(0);
});

test('each client address gets a number of traces per window: then 429, while the live token keeps refreshing and other addresses still detect reuse', async () => {
  const limited = await startTestServer({ RATE_LIMIT_REFRESH_TRACES: '2', TRUST_PROXY: 'true' });
  try {
    const grant = (address: string, token: string) =>
      call(limited, 'POST', '/auth/v1/token?grant_type=refresh_token', {
        body: { refresh_token: token },
        headers: { 'x-forwarded-for': address },
      });
    const session = await signUp(limited, 'traced');
    const first = await grant('203.0.113.7', session.refreshToken);
    expect(first.status).toBe(200);
    const second = await grant('203.0.113.7', first.body.refresh_token as string);
    expect(second.status).toBe(200);
    const active = second.body.refresh_token as string;

    // Guesses naming the session from one address: traced twice, then refused before any work.
    const guess = () => session.refreshToken.slice(0, 22) + randomBytes(32).toString('base64url');
    for (let i = 0; i < 2; i++) {
      const res = await grant('198.51.100.9', guess());
      expect(res.body.error_code).toBe('refresh_token_not_found');
    }
    const refused = await grant('198.51.100.9', guess());
    expect(refused.status).toBe(429);
    expect(refused.body.error_code).toBe('over_request_rate_limit');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);

    // The rightful client's live token is never traced, so it is not held back.
    const holder = await grant('198.51.100.9', active);
    expect(holder.status).toBe(200);

    // From another address, the first token of the chain (long revoked) is still reuse.
    const stale = await grant('192.0.2.44', session.refreshToken);
    expect(stale.body.error_code).toBe('refresh_token_already_used');
    expect(await sessionCountOn(limited, session.id)).toBe(0);
  } finally {
    await limited.close();
  }
});
