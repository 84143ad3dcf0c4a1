// What DATABASE_POOLER changes, held on PostgreSQL itself (tests/production/pgbouncer.test.ts runs
// the same through a real PgBouncer): the settings and their defaults; a pool whose statements
// are never named leaves nothing prepared on the server, through pg's named queries and the
// pipeline alike; behind a pooler each transaction carries its own idle-in-transaction limit,
// which ends it; and the schema cache that polls sees a change nobody announced.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../../src/server/config.js';
import { SchemaCache } from '../../src/server/data-api/schema-cache.js';
import { runPipeline } from '../../src/server/db/pipeline.js';
import { createPool, poolOptionsFrom } from '../../src/server/db/pool.js';
import {
  runStatementsAsCaller,
  withRls,
  withService,
  withServiceFolded,
} from '../../src/server/db/transactions.js';
import { createLogger } from '../../src/server/logger.js';
import { createTestDatabase } from '../support/server.js';

const production = {
  DATABASE_URL: 'postgres://x@localhost/db',
  JWT_SECRET: 'j'.repeat(40),
  PROJECT_API_KEY: 'p'.repeat(30),
  SERVICE_ROLE_KEY: 's'.repeat(30),
  PAYMENT_WEBHOOK_SECRET: 'whsec_' + 'w'.repeat(20),
  CRON_SECRET: 'c'.repeat(30),
};

describe('settings', () => {
  test('no pooler by default: prepared statements, LISTEN on the pool', async () => {
    const { database } = await loadConfig(production);
    expect(database).toMatchObject({
      pooler: 'none',
      preparedStatements: true,
      listenUrl: undefined,
      schemaPollIntervalMs: 5000,
    });
  });

  test('a transaction-mode pooler turns named statements off unless told otherwise', async () => {
    const pooled = await loadConfig({ ...production, DATABASE_POOLER: 'transaction' });
    expect(pooled.database).toMatchObject({ pooler: 'transaction', preparedStatements: false });
    const tracked = await loadConfig({
      ...production,
      DATABASE_POOLER: 'transaction',
      DATABASE_PREPARED_STATEMENTS: 'on',
    });
    expect(tracked.database.preparedStatements).toBe(true);
    const session = await loadConfig({ ...production, DATABASE_POOLER: 'session' });
    expect(session.database.preparedStatements).toBe(true);
  });

  test('bad values stop start-up, naming the variable', async () => {
    for (const [name, value] of [
      ['DATABASE_POOLER', 'statement'],
      ['DATABASE_PREPARED_STATEMENTS', 'sometimes'],
      ['DATABASE_LISTEN_URL', 'http://db:5432/x'],
      ['SCHEMA_POLL_INTERVAL_MS', '10'],
    ] as const) {
      const error = await loadConfig({ ...production, [name]: value }).catch((e: unknown) => e);
      expect(error, name).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain(name);
    }
  });
});

describe('on PostgreSQL itself', () => {
  let url: string;
  let admin: pg.Client;

  beforeAll(async () => {
    url = await createTestDatabase();
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
  });

  test('a pool without prepared statements names none on the server', async () => {
    const pool = createPool(url, { max: 1, preparedStatements: false });
    try {
      const client = await pool.connect();
      try {
        const named = await client.query<{ n: number }>({
          name: 'would.be.prepared',
          text: 'select $1::int + 1 as n',
          values: [1],
        });
        expect(named.rows).toEqual([{ n: 2 }]);
        for (let i = 0; i < 3; i++) {
          const [rows] = await runPipeline(client, [
            { text: 'select $1::int as n, now() as at', values: [i] },
          ]);
          expect(rows![0]!.n).toBe(i);
          expect(rows![0]!.at).toBeInstanceOf(Date); // typed by the row description, as when kept
        }
        const prepared = await client.query('select name from pg_prepared_statements');
        expect(prepared.rows).toEqual([]);
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  });

  test('the same on a pool with them keeps both (the default is unchanged)', async () => {
    const pool = createPool(url, { max: 1 });
    try {
      const client = await pool.connect();
      try {
        await client.query({ name: 'kept.here', text: 'select 1 as n' });
        await runPipeline(client, [{ text: 'select 2 as n', values: [] }]);
        const prepared = await client.query<{ n: number }>(
          'select count(*)::int as n from pg_prepared_statements',
        );
        expect(prepared.rows).toEqual([{ n: 2 }]);
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  });

  test('behind a pooler every transaction sets its own idle limit, and it ends an idle one', async () => {
    const pool = createPool(
      url,
      poolOptionsFrom({
        poolMax: 1,
        statementTimeoutMs: 8000,
        idleInTransactionTimeoutMs: 250,
        pooler: 'transaction',
        preparedStatements: false,
      }),
    );
    pool.on('error', () => undefined);
    const setting = `select current_setting('idle_in_transaction_session_timeout') as limit`;
    try {
      // Nothing at connect: the session has no limit of its own.
      expect((await pool.query(setting)).rows).toEqual([{ limit: '0' }]);
      const inside = await Promise.all([
        withService(pool, async (tx) => (await tx.query(setting)).rows[0]),
        withRls(pool, { role: 'anon' }, async (tx) => (await tx.query(setting)).rows[0]),
        withServiceFolded(pool, { text: setting, values: [] }, async (_tx, rows) => ({ value: rows[0] })),
        runStatementsAsCaller(pool, { role: 'anon' }, [{ text: setting, values: [] }], {
          readOnly: true,
          readTimeoutMs: 5000,
          rollback: true,
        }).then((results) => results[0]![0]),
      ]);
      expect(inside).toEqual(inside.map(() => ({ limit: '250ms' })));
      const idle = withService(pool, async (tx) => {
        await tx.query('select 1');
        await new Promise((resolve) => setTimeout(resolve, 1000));
        return tx.query('select 1');
      });
      await expect(idle).rejects.toThrow();
    } finally {
      await pool.end();
    }
  });

  test('a schema cache that polls sees a table and a column nobody announced', async () => {
    const pool = createPool(url, { max: 2 });
    const cache = new SchemaCache(pool, createLogger('silent'), ['public'], {
      kind: 'poll',
      intervalMs: 100,
    });
    try {
      expect((await cache.get()).tables.has('unannounced')).toBe(false);
      await admin.query('create table public.unannounced (id integer primary key)');
      const seen = async (check: () => Promise<boolean>) => {
        for (const deadline = Date.now() + 3000; Date.now() < deadline;) {
          if (await check()) return true;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        return false;
      };
      expect(await seen(async () => (await cache.get()).tables.has('unannounced'))).toBe(true);
      await admin.query('alter table public.unannounced add column note text');
      const columns = async () => (await cache.get()).tables.get('unannounced')!.columns.has('note');
      expect(await seen(columns)).toBe(true);
    } finally {
      cache.close();
      await pool.end();
    }
  });
});
