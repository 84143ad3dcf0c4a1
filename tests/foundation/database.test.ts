// Migrations apply once and are safe to re-run; withRls runs as the caller's role with the
// caller's claims visible to auth.uid()/auth.role()/auth.jwt(), and nothing leaks past the transaction.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { migrate } from '../../src/server/db/migrate.js';
import { createPool, type Pool } from '../../src/server/db/pool.js';
import { withRls, withService, type Claims } from '../../src/server/db/transactions.js';
import { createTestDatabase } from '../support/server.js';

let pool: Pool;
beforeAll(async () => {
  pool = createPool(await createTestDatabase(), { max: 2 });
});
afterAll(async () => pool?.end());

test('re-running migrations applies nothing and changes nothing', async () => {
  const before = await pool.query('select name, checksum from internal.schema_migrations order by name');
  const result = await migrate(pool);
  expect(result.applied).toEqual([]);
  expect(result.skipped).toBe(before.rowCount);
  const after = await pool.query('select name, checksum from internal.schema_migrations order by name');
  expect(after.rows).toEqual(before.rows);
});

test('concurrent migration runs are serialised', async () => {
  const results = await Promise.all([migrate(pool), migrate(pool)]);
  expect(results.flatMap((r) => r.applied)).toEqual([]);
});

test('withRls sets the role and claims for the transaction only', async () => {
  // The user must exist: a transaction for a user first checks that the account still stands.
  const created = await pool.query<{ id: string }>(
    `insert into auth.users (email) values ('withrls-' || gen_random_uuid() || '@example.com') returning id`,
  );
  const sub = created.rows[0]!.id;
  const claims: Claims = { role: 'authenticated', sub, email: 'a@example.com' };
  const seen = await withRls(pool, claims, async (tx) => {
    const r = await tx.query<{ uid: string; role: string; current: string; email: string }>(
      `select auth.uid()::text as uid, auth.role() as role, current_user as current, auth.jwt()->>'email' as email`,
    );
    return r.rows[0];
  });
  expect(seen).toEqual({ uid: sub, role: 'authenticated', current: 'authenticated', email: 'a@example.com' });
  const after = await pool.query<{ current: string; claims: string | null }>(
    `select current_user as current, nullif(current_setting('request.jwt.claims', true), '') as claims`,
  );
  expect(after.rows[0]!.current).not.toBe('authenticated');
  expect(after.rows[0]!.claims).toBeNull();
});

test('request roles cannot read the auth or internal schemas', async () => {
  for (const role of ['anon', 'authenticated'] as const) {
    await expect(withRls(pool, { role }, (tx) => tx.query('select * from auth.users'))).rejects.toMatchObject(
      {
        code: '42501',
      },
    );
    await expect(
      withRls(pool, { role }, (tx) => tx.query('select * from internal.rate_limits')),
    ).rejects.toMatchObject({ code: '42501' });
  }
});

test('an unknown role is refused before reaching SQL', async () => {
  await expect(withRls(pool, { role: 'postgres' as never }, async () => 1)).rejects.toThrow(/unknown role/);
});

test('a failing transaction rolls back', async () => {
  await expect(
    withService(pool, async (tx) => {
      await tx.query(`insert into internal.rate_limits values ('rollback-check', now(), 1)`);
      throw new Error('boom');
    }),
  ).rejects.toThrow('boom');
  const r = await pool.query(`select 1 from internal.rate_limits where bucket = 'rollback-check'`);
  expect(r.rowCount).toBe(0);
});
