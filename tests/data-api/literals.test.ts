// The one place values become SQL text is held to one property: a literal made by sqlLiteral
// reads back in PostgreSQL as exactly what the same value sent as a parameter reads back as, for
// hostile strings (quotes, backslashes, E'' and $-tricks, every kind of Unicode, huge values) and
// arrays; NUL is refused as PostgreSQL refuses it; placeholders inside names and strings are left
// alone.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LiteralError, inlineParameters, sqlLiteral } from '../../src/server/db/literals.js';
import { createTestDatabase } from '../support/server.js';

let client: pg.Client;

beforeAll(async () => {
  client = new pg.Client({ connectionString: await createTestDatabase() });
  await client.connect();
});
afterAll(async () => client?.end());

/** A small seeded generator, so a failure names a case that can be replayed. */
function random(seed: number) {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

const PIECES = [
  "'",
  "''",
  '\\',
  "\\'",
  '"',
  '$1',
  '$$',
  '$tag$',
  "E'",
  ';',
  '--',
  '/*',
  '*/',
  '\n',
  '\r',
  '\t',
  '\u007f',
  'é',
  '日本',
  '😀',
  '\ud800', // a lone surrogate: not valid UTF-16, sent as U+FFFD either way
  '\u202e',
  ' ',
  'drop table x',
  '{',
  '}',
  ',',
  'NULL',
];

function hostileString(next: () => number): string {
  let s = '';
  const parts = Math.floor(next() * 12);
  for (let i = 0; i < parts; i++) {
    s +=
      next() < 0.7
        ? PIECES[Math.floor(next() * PIECES.length)]!
        : String.fromCodePoint(1 + Math.floor(next() * 0x2ffff));
  }
  return s.split('\u0000').join('');
}

describe('sqlLiteral', () => {
  test('a literal reads back exactly as the same value sent as a parameter (2,000 hostile strings)', async () => {
    const next = random(20261122);
    for (let batch = 0; batch < 20; batch++) {
      const values = Array.from({ length: 100 }, () => hostileString(next));
      const literals = values.map((v) => `${sqlLiteral(v)}::text`).join(', ');
      const params = values.map((_, i) => `$${i + 1}::text`).join(', ');
      const r = await client.query<{ a: string[]; b: string[] }>(
        `select array[${literals}] as a, array[${params}] as b`,
        values,
      );
      expect(r.rows[0]!.a).toEqual(r.rows[0]!.b);
    }
  });

  test('the meaning does not depend on standard_conforming_strings', async () => {
    const value = "a\\'b\\\\c'd";
    for (const setting of ['on', 'off']) {
      await client.query(`set standard_conforming_strings = ${setting}`);
      const r = await client.query<{ v: string }>(`select ${sqlLiteral(value)}::text as v`);
      expect(r.rows[0]!.v).toBe(value);
    }
    await client.query('set standard_conforming_strings = on');
  });

  test('arrays, numbers, booleans, null and JSON read back as parameters do', async () => {
    const next = random(7);
    const array = Array.from({ length: 50 }, () => hostileString(next));
    const cases: [unknown, string][] = [
      [array, 'text[]'],
      [
        [
          ['a', null],
          ['"q"', '\\'],
        ],
        'text[]',
      ],
      [[1, 2, 3], 'integer[]'],
      [42, 'integer'],
      [-1.5e10, 'float8'],
      [true, 'boolean'],
      [null, 'text'],
      [JSON.stringify({ a: "'", b: ['\\', '$1'] }), 'jsonb'],
    ];
    for (const [value, type] of cases) {
      const r = await client.query<{ same: boolean }>(
        `select ${sqlLiteral(value)}::${type} is not distinct from $1::${type} as same`,
        [value],
      );
      expect(r.rows[0]!.same, `${JSON.stringify(value)} as ${type}`).toBe(true);
    }
  });

  test('a huge value survives whole', async () => {
    const value = "x'\\".repeat(400_000);
    const r = await client.query<{ same: boolean }>(`select ${sqlLiteral(value)}::text = $1 as same`, [
      value,
    ]);
    expect(r.rows[0]!.same).toBe(true);
  });

  test('NUL is refused, as PostgreSQL refuses it in a parameter', async () => {
    expect(() => sqlLiteral('a\u0000b')).toThrow(LiteralError);
    await expect(client.query('select $1::text', ['a\u0000b'])).rejects.toMatchObject({ code: '22021' });
  });
});

describe('inlineParameters', () => {
  test('replaces placeholders, and only those outside names and strings', async () => {
    const text =
      `select $1::text as "a$1", '$2 stays' as b, E'it\\'s $2' as c, $$ $2 $$ as d, ` +
      `$tag$ $1 $tag$ as e, $2::int + $10::int as f`;
    const values = ["o'k", 2, 3, 4, 5, 6, 7, 8, 9, 40];
    const inlined = inlineParameters(text, values);
    const r = await client.query<Record<string, unknown>>(inlined);
    expect(r.rows[0]).toEqual({ a$1: "o'k", b: '$2 stays', c: "it's $2", d: ' $2 ', e: ' $1 ', f: 42 });
  });

  test('a placeholder without a value is an error, never an empty literal', () => {
    expect(() => inlineParameters('select $2', ['only one'])).toThrow(/No value for \$2/);
  });
});
