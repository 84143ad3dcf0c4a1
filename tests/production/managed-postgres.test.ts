// Installing where managed PostgreSQL runs: no superuser, only an owner role. Two set-ups, as
// providers make them: Supabase-style (request roles already there, granted WITH ADMIN OPTION to
// an owner with CREATEROLE and BYPASSRLS) and CREATEROLE only, which the service refuses with the
// exact SQL an administrator runs once; after running that SQL it installs. Each then passes the
// smoke journey (sign-up, workspace, data API, webhook, digest) in production mode.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { inject } from 'vitest';
import { migrate } from '../../src/server/db/migrate.js';
import { createPool } from '../../src/server/db/pool.js';
import { DatabaseSetupError } from '../../src/server/db/preflight.js';
import { call, createTestDatabase, startTestServer, type TestServer } from '../support/server.js';
import { deliverEvent, envelope } from '../support/stripe-events.js';

let admin: pg.Client;
const made: { roles: string[]; databases: string[] } = { roles: [], databases: [] };

beforeAll(async () => {
  admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await admin.connect();
});
afterAll(async () => {
  for (const db of made.databases) await admin.query(`drop database if exists ${db} with (force)`);
  for (const role of made.roles) {
    await admin.query(`drop owned by ${role} cascade`).catch(() => undefined);
    await admin.query(`drop role if exists ${role}`);
  }
  await admin.end();
});

/** An owner role and a database it owns; `attributes` as a provider would give them. */
async function ownerAndDatabase(
  attributes: string,
): Promise<{ role: string; url: string; database: string }> {
  const suffix = randomBytes(4).toString('hex');
  const role = `owner_${suffix}`;
  const database = `managed_${suffix}`;
  await admin.query(`create role ${role} login password 'owner-password' ${attributes}`);
  made.roles.push(role);
  await admin.query(`create database ${database} owner ${role}`);
  made.databases.unshift(database);
  const url = new URL(inject('pgAdminUrl'));
  url.username = role;
  url.password = 'owner-password';
  url.pathname = `/${database}`;
  return { role, url: url.toString(), database };
}

async function migrateAs(url: string) {
  const pool = createPool(url);
  try {
    return await migrate(pool);
  } finally {
    await pool.end();
  }
}

/** Sign-up, a workspace, the data API, a signed webhook and a digest run, as production serves them. */
async function smokeJourney(server: TestServer) {
  const client = server.client();
  const email = `smoke-${randomBytes(4).toString('hex')}@example.com`;
  const signUp = await client.auth.signUp({ email, password: 'correct horse battery' });
  expect(signUp.error).toBeNull();
  expect(signUp.data.session).not.toBeNull();
  const created = await client.rpc('create_workspace', { name: 'Managed Co' });
  expect(created.error).toBeNull();
  const workspaceId = (created.data as { id: string }).id;
  const inserted = await client
    .from('projects')
    .insert({ workspace_id: workspaceId, name: 'Apollo' })
    .select('name');
  expect(inserted).toMatchObject({ status: 201, data: [{ name: 'Apollo' }] });
  const listed = await client.from('projects').select('name').eq('workspace_id', workspaceId);
  expect(listed.data).toEqual([{ name: 'Apollo' }]);
  // Row-level security holds: another user sees none of it.
  const other = server.client();
  expect(
    (await other.auth.signUp({ email: `other-${email}`, password: 'correct horse battery' })).error,
  ).toBeNull();
  expect((await other.from('projects').select('name')).data).toEqual([]);
  // The service role (BYPASSRLS) sees it.
  const service = await server.adminClient().from('projects').select('name').eq('workspace_id', workspaceId);
  expect(service.data).toEqual([{ name: 'Apollo' }]);

  const webhook = await deliverEvent(
    server,
    envelope('customer.created', { id: 'cus_managed', object: 'customer' }),
  );
  expect(webhook.status).toBe(200);
  const digest = await call(server, 'POST', '/api/notifications/digest?frequency=daily', {
    apikey: null,
    headers: { authorization: `Bearer ${server.config.cronSecret}` },
  });
  expect(digest.status).toBe(200);
  expect(digest.body).toMatchObject({ ok: true, frequency: 'daily' });
}

describe('an owner role that is not a superuser', () => {
  test('Supabase-style: request roles already there, granted with admin option; installs and serves', async () => {
    const { role, url } = await ownerAndDatabase('createrole bypassrls');
    await admin.query(`grant anon, authenticated, service_role to ${role} with admin option`);
    const first = await migrateAs(url);
    expect(first.applied.length).toBeGreaterThan(30);
    // The roles were reused as they were.
    const service = await admin.query(`select rolbypassrls from pg_roles where rolname = 'service_role'`);
    expect(service.rows[0]).toEqual({ rolbypassrls: true });
    expect((await migrateAs(url)).applied).toEqual([]);

    const server = await startTestServer({ DATABASE_URL: url });
    try {
      await smokeJourney(server);
    } finally {
      await server.close();
    }
  });

  test('CREATEROLE only: refused with the SQL to run once; after it, installs and serves', async () => {
    const { role, url, database } = await ownerAndDatabase('createrole');
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
    const statements = message
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => /^(alter|grant|create) /.test(line));
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) await admin.query(statement.replace(/--.*$/, ''));

    expect((await migrateAs(url)).applied.length).toBeGreaterThan(30);
    const server = await startTestServer({ DATABASE_URL: url });
    try {
      await smokeJourney(server);
    } finally {
      await server.close();
    }
    expect(database).toMatch(/^managed_/);
  });

  test("a database that already has another identity service's auth schema is refused, untouched", async () => {
    const { url } = await ownerAndDatabase('createrole bypassrls');
    const owner = new pg.Client({ connectionString: url });
    await owner.connect();
    await owner.query('create schema auth; create table auth.users (id uuid primary key, email text)');
    const refusal = await migrateAs(url).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(DatabaseSetupError);
    expect((refusal as Error).message).toMatch(/Supabase project's GoTrue/);
    const tables = await owner.query(`select count(*)::int as n from pg_tables where schemaname = 'auth'`);
    await owner.end();
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
