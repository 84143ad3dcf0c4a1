// The statement pipeline (several prepared statements, one round trip, one implicit transaction)
// on a real connection: each text is parsed once per connection and reused, the number kept is
// bounded, an error anywhere undoes the whole round trip and leaves the connection usable,
// transaction-local settings end with it, and values travel as parameters (hostile ones too).
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createPool, type Pool, type PoolClient } from '../../src/server/db/pool.js';
import {
  MAX_KEPT_STATEMENT_TEXT,
  MAX_PREPARED_PER_CONNECTION,
  MAX_PREPARED_TEXT_PER_CONNECTION,
  runPipeline,
} from '../../src/server/db/pipeline.js';
import { createTestDatabase } from '../support/server.js';

let pool: Pool;
let client: PoolClient;

beforeAll(async () => {
  pool = createPool(await createTestDatabase(), { max: 2 });
  client = await pool.connect();
  await client.query('create table pipeline_items (id int primary key, label text not null)');
});
afterAll(async () => {
  client?.release();
  await pool?.end();
});

async function preparedCount(): Promise<number> {
  const result = await client.query<{ n: number }>(
    "select count(*)::int as n from pg_prepared_statements where name like 'tenantry_%'",
  );
  return result.rows[0]!.n;
}

test('rows come back per statement, typed as pg types them, and a text is parsed once', async () => {
  const before = await preparedCount();
  for (let i = 0; i < 3; i++) {
    const [first, second] = await runPipeline(client, [
      { text: 'select $1::int + 1 as n, $2::text as label', values: [i, `row ${i}`] },
      { text: 'select g as n from generate_series(1, $1::int) g', values: [i + 1] },
    ]);
    expect(first).toEqual([{ n: i + 1, label: `row ${i}` }]);
    expect(second!.map((r) => r.n)).toEqual(Array.from({ length: i + 1 }, (_, k) => k + 1));
  }
  expect((await preparedCount()) - before).toBe(2);
});

test('the statements are one transaction: a later failure undoes an earlier write', async () => {
  await expect(
    runPipeline(client, [
      { text: 'insert into pipeline_items (id, label) values ($1, $2)', values: [1, 'kept?'] },
      { text: 'select 1 / $1::int', values: [0] },
    ]),
  ).rejects.toMatchObject({ code: '22012' });
  const rows = await client.query('select * from pipeline_items');
  expect(rows.rows).toEqual([]);
  // Both statements were parsed before the failure; running them again reuses them.
  await runPipeline(client, [
    { text: 'insert into pipeline_items (id, label) values ($1, $2)', values: [1, 'kept'] },
    { text: 'select 1 / $1::int', values: [1] },
  ]);
  expect((await client.query('select label from pipeline_items')).rows).toEqual([{ label: 'kept' }]);
});

test('a statement that fails to parse is parsed again next time, under a new name', async () => {
  await client.query('create table pipeline_later (id int)').catch(() => undefined);
  await client.query('drop table pipeline_later');
  const text = 'select count(*)::int as n from pipeline_later';
  await expect(runPipeline(client, [{ text, values: [] }])).rejects.toMatchObject({ code: '42P01' });
  await client.query('create table pipeline_later (id int)');
  expect(await runPipeline(client, [{ text, values: [] }])).toEqual([[{ n: 0 }]]);
});

test('transaction-local settings end with the round trip', async () => {
  const [rows] = await runPipeline(client, [
    {
      text: "select set_config('request.jwt.claims', $1, true) as claims, set_config('role', $2, true) as role",
      values: ['{"sub":"someone"}', 'pg_read_all_data'],
    },
    { text: "select current_user as who, current_setting('request.jwt.claims', true) as claims", values: [] },
  ]).then((r) => [r[1]]);
  expect(rows).toEqual([{ who: 'pg_read_all_data', claims: '{"sub":"someone"}' }]);
  const after = await client.query(
    "select current_user as who, coalesce(current_setting('request.jwt.claims', true), '') as claims",
  );
  expect(after.rows[0].who).not.toBe('pg_read_all_data');
  expect(after.rows[0].claims).toBe('');
});

test('hostile values are parameters; a NUL in a value or a text is refused and the connection lives on', async () => {
  const hostile = ["'; drop table pipeline_items; --", '\\', "E'\\''", '$1', '$$ $tag$', '😀\u202e'];
  for (const value of hostile) {
    const [[row]] = (await runPipeline(client, [{ text: 'select $1::text as v', values: [value] }])) as [
      [{ v: string }],
    ];
    expect(row.v).toBe(value);
  }
  await expect(
    runPipeline(client, [{ text: 'select $1::text as v', values: ['a\u0000b'] }]),
  ).rejects.toMatchObject({ code: '22021' });
  await expect(runPipeline(client, [{ text: 'select 1 as "a\u0000b"', values: [] }])).rejects.toMatchObject({
    code: '22021',
  });
  expect(await runPipeline(client, [{ text: 'select 2 as n', values: [] }])).toEqual([[{ n: 2 }]]);
  expect((await client.query('select count(*)::int as n from pipeline_items')).rows[0].n).toBe(1);
});

test('the statements kept per connection are bounded, least recently used closed first', async () => {
  const hot = { text: 'select $1::int as hot', values: [1] };
  for (let i = 0; i < MAX_PREPARED_PER_CONNECTION + 40; i++) {
    await runPipeline(client, [hot, { text: `select $1::int + ${i} as n`, values: [i] }]);
  }
  const count = await preparedCount();
  expect(count).toBeLessThanOrEqual(MAX_PREPARED_PER_CONNECTION);
  expect(count).toBeGreaterThan(MAX_PREPARED_PER_CONNECTION - 10);
  // The statement used in every round trip is still the one parsed first.
  const hotStatements = await client.query<{ n: number }>(
    "select count(*)::int as n from pg_prepared_statements where statement = 'select $1::int as hot'",
  );
  expect(hotStatements.rows[0]!.n).toBe(1);
});

test('the text kept per connection is bounded too, and a long statement is never kept', async () => {
  const filler = (i: number, size: number) => `select $1::int + ${i} as n /* ${'x'.repeat(size)} */`;
  for (let i = 0; i < 120; i++) {
    await runPipeline(client, [{ text: filler(i, 4000), values: [1] }]);
  }
  const kept = await client.query<{ n: number; bytes: number }>(
    "select count(*)::int as n, coalesce(sum(length(statement)), 0)::int as bytes from pg_prepared_statements where name like 'tenantry_%'",
  );
  expect(kept.rows[0]!.bytes).toBeLessThanOrEqual(MAX_PREPARED_TEXT_PER_CONNECTION);
  const before = await preparedCount();
  const long = filler(-1, MAX_KEPT_STATEMENT_TEXT);
  for (let i = 0; i < 3; i++) {
    expect(
      await runPipeline(client, [
        { text: long, values: [i] },
        { text: long, values: [i + 1] },
      ]),
    ).toEqual([[{ n: i - 1 }], [{ n: i }]]);
  }
  expect(await preparedCount()).toBe(before);
});

test('a kept statement whose plan no longer fits is parsed afresh after its error', async () => {
  await client.query('create table pipeline_shape (id int)');
  await client.query('insert into pipeline_shape values (1)');
  const text = 'select * from pipeline_shape';
  expect(await runPipeline(client, [{ text, values: [] }])).toEqual([[{ id: 1 }]]);
  await client.query("alter table pipeline_shape add column label text default 'one'");
  await expect(runPipeline(client, [{ text, values: [] }])).rejects.toMatchObject({ code: '0A000' });
  expect(await runPipeline(client, [{ text, values: [] }])).toEqual([[{ id: 1, label: 'one' }]]);
});

test('a read that outlives the driver timeout fails instead of waiting forever', async () => {
  const other = await pool.connect();
  try {
    await expect(runPipeline(other, [{ text: 'select pg_sleep($1)', values: [2] }], 200)).rejects.toThrow(
      /timeout/i,
    );
  } finally {
    other.release(true);
  }
});
