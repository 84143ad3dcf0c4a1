// Installing where managed PostgreSQL runs: no superuser, only an owner role. Two set-ups, as
// providers make them: Supabase-style (request roles already there, granted WITH ADMIN OPTION to
// an owner with CREATEROLE and BYPASSRLS) and CREATEROLE only, which the service refuses with the
// exact SQL an administrator runs once; after running that SQL it installs. Each then passes the
// smoke journey (sign-up, workspace, data API, webhook, digest) in production mode. The same on
// PostgreSQL 15 is in postgres-versions.test.ts; this file runs on the default version.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { migrate } from '../../src/server/db/migrate.js';
import { createPool } from '../../src/server/db/pool.js';
import { DatabaseSetupError } from '../../src/server/db/preflight.js';
import {
  dropOwners,
  migrateAs,
  ownerAndDatabase,
  smokeJourneyOn,
  statementsIn,
  type Owner,
} from '../support/managed-install.js';
import { createTestDatabase } from '../support/server.js';

let admin: pg.Client;
const owners: Owner[] = [];
const owner = async (attributes: string) => {
  const made = await ownerAndDatabase(admin, inject('pgAdminUrl'), attributes);
  owners.push(made);
  return made;
};

beforeAll(async () => {
  admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await admin.connect();
});
afterAll(async () => {
  await dropOwners(admin, owners);
  await admin.end();
});

describe('an owner role that is not a superuser', () => {
  test('Supabase-style: request roles already there, granted with admin option; installs and serves', async () => {
    const { role, url } = await owner('createrole bypassrls');
    await admin.query(`grant anon, authenticated, service_role to ${role} with admin option`);
    const first = await migrateAs(url);
    expect(first.applied.length).toBeGreaterThan(30);
    // The roles were reused as they were.
    const service = await admin.query(`select rolbypassrls from pg_roles where rolname = 'service_role'`);
    expect(service.rows[0]).toEqual({ rolbypassrls: true });
    expect((await migrateAs(url)).applied).toEqual([]);
    await smokeJourneyOn(url);
  });

  test('CREATEROLE only: refused with the SQL to run once; after it, installs and serves', async () => {
    const { role, url } = await owner('createrole');
    const refusal = await migrateAs(url).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(DatabaseSetupError);
    const message = (refusal as Error).message;
    expect(message).toContain(`alter role "${role}" bypassrls;`);
    expect(message).toContain('docs/operations.md');
    // Nothing was half-installed.
    const probe = new pg.Client({ connectionString: url });
    await probe.connect();
    const schemas = await probe.query(`select 1 from pg_namespace where nspname in ('auth', 'internal')`);
    await probe.end();
    expect(schemas.rowCount).toBe(0);

    // The administrator runs exactly the statements the message names.
    const statements = statementsIn(message);
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) await admin.query(statement);
    expect((await migrateAs(url)).applied.length).toBeGreaterThan(30);
    await smokeJourneyOn(url);
  });

  test("a database that already has another identity service's auth schema is refused, untouched", async () => {
    const { url } = await owner('createrole bypassrls');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('create schema auth; create table auth.users (id uuid primary key, email text)');
    const refusal = await migrateAs(url).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(DatabaseSetupError);
    expect((refusal as Error).message).toMatch(/Supabase project's GoTrue/);
    const tables = await client.query(`select count(*)::int as n from pg_tables where schemaname = 'auth'`);
    await client.end();
    expect(tables.rows[0]).toEqual({ n: 1 });
  });
});

test("an install that applied 0001's earlier text upgrades as it is; any other change still stops start-up", async () => {
  const url = await createTestDatabase();
  const pool = createPool(url);
  try {
    const earlier = '60ba70016f729305af1d5ad9aafb5b4e4df6c9c70183c21e9065f2204e24d019';
    await pool.query(
      `update internal.schema_migrations set checksum = $1 where name = '0001_roles_and_auth.sql'`,
      [earlier],
    );
    expect((await migrate(pool)).applied).toEqual([]);
    await pool.query(
      `update internal.schema_migrations set checksum = 'edited' where name = '0001_roles_and_auth.sql'`,
    );
    await expect(migrate(pool)).rejects.toThrow(/0001_roles_and_auth.sql was changed after it was applied/);
  } finally {
    await pool.end();
  }
});
