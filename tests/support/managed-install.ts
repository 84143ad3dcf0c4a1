// Test support: installing the service as managed PostgreSQL lets teams install it (an owner role
// that is not a superuser, set up as a provider would), and the smoke journey every install must
// pass in production mode: sign-up, a workspace, the data API under row-level security, a signed
// webhook and a digest run.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { expect } from 'vitest';
import { migrate, type MigrationResult } from '../../src/server/db/migrate.js';
import { createPool } from '../../src/server/db/pool.js';
import { urlFor } from './postgres-versions.js';
import { call, startTestServer, type TestServer } from './server.js';
import { deliverEvent, envelope } from './stripe-events.js';

export interface Owner {
  role: string;
  database: string;
  url: string;
}

/**
 * An owner role with `attributes` as a provider gives them, and a database it owns; dropped by
 * `dropOwners`. `admin` is a superuser's connection to the cluster at `adminUrl`.
 */
export async function ownerAndDatabase(
  admin: pg.Client,
  adminUrl: string,
  attributes: string,
): Promise<Owner> {
  const suffix = randomBytes(4).toString('hex');
  const role = `owner_${suffix}`;
  const database = `managed_${suffix}`;
  await admin.query(`create role ${role} login password 'owner-password' ${attributes}`);
  await admin.query(`create database ${database} owner ${role}`);
  return { role, database, url: urlFor(adminUrl, database, { name: role, password: 'owner-password' }) };
}

export async function dropOwners(admin: pg.Client, owners: Owner[]): Promise<void> {
  for (const owner of owners) await admin.query(`drop database if exists ${owner.database} with (force)`);
  for (const owner of owners) {
    await admin.query(`drop owned by ${owner.role} cascade`).catch(() => undefined);
    await admin.query(`drop role if exists ${owner.role}`);
  }
}

export async function migrateAs(url: string): Promise<MigrationResult> {
  const pool = createPool(url);
  try {
    return await migrate(pool);
  } finally {
    await pool.end();
  }
}

/** The statements a DatabaseSetupError tells an administrator to run, as they would copy them. */
export function statementsIn(message: string): string[] {
  return message
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^(alter|grant|create) /.test(line))
    .map((line) => line.replace(/--.*$/, '').trim());
}

/** Starts production mode on `url` and runs the smoke journey against it. */
export async function smokeJourneyOn(url: string): Promise<void> {
  const server = await startTestServer({ DATABASE_URL: url });
  try {
    await smokeJourney(server);
  } finally {
    await server.close();
  }
}

/** Sign-up, a workspace, the data API, a signed webhook and a digest run, as production serves them. */
export async function smokeJourney(server: TestServer): Promise<void> {
  const client = server.client();
  const email = `smoke-${randomBytes(4).toString('hex')}@example.com`;
  const signUp = await client.auth.signUp({ email, password: 'correct horse battery' });
  expect(signUp.error).toBeNull();
  expect(signUp.data.session).not.toBeNull();
  const signIn = await server.client().auth.signInWithPassword({ email, password: 'correct horse battery' });
  expect(signIn.error).toBeNull();
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
