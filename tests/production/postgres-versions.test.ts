// Every supported PostgreSQL major version: the migrations and the smoke journey (sign-up,
// workspace, data API, webhook, digest) in production mode on 15, 16 and 17 (18, the default, is
// what the rest of the suite runs on), and on 15 the install as a non-superuser owner in both
// set-ups managed providers use. The builds come from the optional packages postgres-15 ...
// postgres-17 (linux-x64); where they cannot be installed the suites say they were skipped, and
// CI (REQUIRE_PG_VERSIONS=1) fails instead.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DatabaseSetupError } from '../../src/server/db/preflight.js';
import {
  dropOwners,
  migrateAs,
  ownerAndDatabase,
  smokeJourneyOn,
  statementsIn,
  type Owner,
} from '../support/managed-install.js';
import {
  OTHER_VERSIONS,
  startVersionCluster,
  urlFor,
  versionPackageDir,
  type OtherVersion,
  type VersionCluster,
} from '../support/postgres-versions.js';

const required = process.env.REQUIRE_PG_VERSIONS === '1';

for (const version of OTHER_VERSIONS) {
  const installed = versionPackageDir(version) !== null;
  if (!installed && !required) {
    console.warn(
      `PostgreSQL ${version}: skipped, the package postgres-${version} is not installed on this platform`,
    );
  }
  describe.skipIf(!installed && !required)(`PostgreSQL ${version}`, () => {
    let cluster: VersionCluster;
    let admin: pg.Client;
    const owners: Owner[] = [];

    beforeAll(async () => {
      cluster = await startVersionCluster(version as OtherVersion);
      admin = new pg.Client({ connectionString: cluster.adminUrl });
      await admin.connect();
    }, 120_000);
    afterAll(async () => {
      if (admin) {
        await dropOwners(admin, owners);
        await admin.end();
      }
      await cluster?.stop();
    });

    test('the migrations apply, once, and the smoke journey passes', async () => {
      const version = await admin.query<{ v: string }>(`select current_setting('server_version_num') as v`);
      expect(Math.floor(Number(version.rows[0]!.v) / 10000)).toBe(cluster.version);
      await admin.query('create database tenantry');
      const url = urlFor(cluster.adminUrl, 'tenantry');
      expect((await migrateAs(url)).applied.length).toBeGreaterThan(30);
      expect((await migrateAs(url)).applied).toEqual([]);
      await smokeJourneyOn(url);
    }, 120_000);

    if (version !== 15) return;

    test('as a Supabase-style owner (roles made beforehand, granted with admin option)', async () => {
      for (const role of ['anon', 'authenticated'])
        await admin.query(`create role ${role} nologin noinherit`).catch(() => undefined);
      await admin.query('create role service_role nologin noinherit bypassrls').catch(() => undefined);
      const made = await ownerAndDatabase(admin, cluster.adminUrl, 'createrole bypassrls');
      owners.push(made);
      await admin.query(`grant anon, authenticated, service_role to ${made.role} with admin option`);
      expect((await migrateAs(made.url)).applied.length).toBeGreaterThan(30);
      await smokeJourneyOn(made.url);
    }, 120_000);

    test('as a CREATEROLE-only owner: refused with the SQL, which an administrator runs once', async () => {
      const made = await ownerAndDatabase(admin, cluster.adminUrl, 'createrole');
      owners.push(made);
      const refusal = await migrateAs(made.url).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refusal).toBeInstanceOf(DatabaseSetupError);
      const statements = statementsIn((refusal as Error).message);
      expect(statements).toContain(`alter role "${made.role}" bypassrls;`);
      for (const statement of statements) await admin.query(statement);
      expect((await migrateAs(made.url)).applied.length).toBeGreaterThan(30);
      await smokeJourneyOn(made.url);
    }, 120_000);
  });
}
