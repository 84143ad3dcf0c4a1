// Upgrading a database whose sessions were opened before the refresh-token chain moved into the
// session row (migration 0034): every session's live token keeps working and rotates into the new
// form, a retry with its parent within the reuse interval gets the same child, and presenting an
// older token of the session is still reuse.
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { migrate, MIGRATIONS_DIR } from '../../src/server/db/migrate.js';
import { createPool, type Pool } from '../../src/server/db/pool.js';
import { createRefreshTokenKey, legacyChildRefreshToken } from '../../src/server/identity/refresh-tokens.js';
import { randomKey, startTestServer, type TestServer } from '../support/server.js';

let pool: Pool;
let server: TestServer;
let earlier: string;
const tokens = { older: '', parent: '', live: '', other: '' };
let userId = '';
const jwtSecret = randomKey();
const sha256 = (token: string) => createHash('sha256').update(token).digest();

beforeAll(async () => {
  const adminUrl = inject('pgAdminUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = adminUrl.replace(/\/postgres$/, `/${name}`);
  pool = createPool(url, { max: 2 });

  // The database as it was before 0034.
  earlier = mkdtempSync(path.join(tmpdir(), 'tenantry-migrations-'));
  for (const file of readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql') && f < '0034')) {
    copyFileSync(path.join(MIGRATIONS_DIR, file), path.join(earlier, file));
  }
  await migrate(pool, earlier);

  // A session rotated twice (older -> parent -> live), and one that never rotated, stored as before.
  // Children were HMACs of their parent then too, under the key JWT_SECRET derives.
  const key = createRefreshTokenKey(jwtSecret);
  tokens.older = randomBytes(32).toString('base64url');
  tokens.parent = legacyChildRefreshToken(key, tokens.older);
  tokens.live = legacyChildRefreshToken(key, tokens.parent);
  tokens.other = randomBytes(32).toString('base64url');
  userId = (
    await pool.query<{ id: string }>(
      `insert into auth.users (email, encrypted_password, email_confirmed_at)
       values ('before@example.com', null, now()) returning id`,
    )
  ).rows[0]!.id;
  await pool.query(
    `with s1 as (insert into auth.sessions (user_id) values ($1) returning id),
     s2 as (insert into auth.sessions (user_id) values ($1) returning id),
     t1 as (insert into auth.refresh_tokens (token_hash, session_id, user_id, revoked)
            select sha256(convert_to($2, 'utf8')), id, $1, true from s1 returning id),
     t2 as (insert into auth.refresh_tokens (token_hash, session_id, user_id, parent_id, revoked, updated_at)
            select sha256(convert_to($3, 'utf8')), s1.id, $1, t1.id, true, now() from s1, t1 returning id),
     t3 as (insert into auth.refresh_tokens (token_hash, session_id, user_id, parent_id)
            select sha256(convert_to($4, 'utf8')), s1.id, $1, t2.id from s1, t2)
     insert into auth.refresh_tokens (token_hash, session_id, user_id)
     select sha256(convert_to($5, 'utf8')), id, $1 from s2`,
    [userId, tokens.older, tokens.parent, tokens.live, tokens.other],
  );

  expect((await migrate(pool)).applied).toEqual(
    readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql') && f >= '0034'),
  );
  server = await startTestServer({ DATABASE_URL: url, JWT_SECRET: jwtSecret });
});

afterAll(async () => {
  await server?.close();
  await pool?.end();
  if (earlier) rmSync(earlier, { recursive: true, force: true });
});

const refresh = (token: string) => server.client().auth.refreshSession({ refresh_token: token });

test('each session carries its live token and that token’s parent', async () => {
  const { rows } = await pool.query<{ active: Buffer; parent: Buffer | null; fresh: boolean }>(
    `select refresh_token_hash as active, refresh_parent_hash as parent,
       refresh_rotated_at > now() - interval '1 minute' as fresh
     from auth.sessions where user_id = $1 order by refresh_parent_hash is null`,
    [userId],
  );
  expect(rows).toEqual([
    { active: sha256(tokens.live), parent: sha256(tokens.parent), fresh: true },
    { active: sha256(tokens.other), parent: null, fresh: true },
  ]);
});

test('a token issued before rotates into one naming its session; its parent is replayed, older is reuse', async () => {
  const never = await refresh(tokens.other);
  expect(never.error).toBeNull();
  expect(never.data.session!.refresh_token).toHaveLength(65);

  // A client that lost the last answer before the upgrade retries with the parent: the same child.
  const retried = await refresh(tokens.parent);
  expect(retried.error).toBeNull();
  expect(retried.data.session!.refresh_token).toBe(tokens.live);

  const rotated = await refresh(tokens.live);
  expect(rotated.error).toBeNull();
  const child = rotated.data.session!.refresh_token;
  expect(child).toHaveLength(65);
  const again = await refresh(tokens.live);
  expect(again.data.session?.refresh_token).toBe(child);
  const next = await refresh(child);
  expect(next.error).toBeNull();

  const stale = await refresh(tokens.older);
  expect(stale.error?.code).toBe('refresh_token_already_used');
  const sessions = await pool.query('select 1 from auth.sessions where user_id = $1', [userId]);
  expect(sessions.rowCount).toBe(1); // the session that never rotated stays
});
