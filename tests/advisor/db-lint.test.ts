// `npm run db:lint`, the security and performance advisor, on real databases cloned from the
// migrated template: on a fixture with one deliberate mistake per class it reports each class, on
// the object at fault, and nothing else that the project's own schema does not already draw; on
// the project's own schema it reports no error and no warning. The command itself runs as a child
// process: exit 1 with errors, 0 without, 2 on bad usage, and --json says what the table says.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Finding, Rule } from '../../src/server/advisor/finding.js';
import { RULES } from '../../src/server/advisor/rules.js';
import { runAdvisor } from '../../src/server/advisor/run.js';
import { createPool, type Pool } from '../../src/server/db/pool.js';
import { generateTypes } from '../../src/server/typegen/generate.js';
import { createTestDatabase, randomKey } from '../support/server.js';
import { MISTAKES, UNTYPED } from './mistakes.js';

// Real findings on the project's own schema, reported for a core migration to add the indexes:
// foreign keys whose referenced rows are deleted (users, workspaces, factors, flow states) while
// the referencing table has no index on the key, so each such delete scans the referencing table.
// The advisor must not hide them; this list only lets the suite pass until they are indexed, and
// anything new on the project's schema fails it.
const run = promisify(execFile);
const dir = path.resolve('test-results', `db-lint-${randomKey().slice(0, 8)}`);
const cleanTypes = path.join(dir, 'clean.ts');
const fixtureTypes = path.join(dir, 'fixture.ts');
let cleanUrl: string;
let fixtureUrl: string;
let clean: Pool;
let fixture: Pool;

async function execute(url: string, sql: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  mkdirSync(dir, { recursive: true });
  [cleanUrl, fixtureUrl] = await Promise.all([createTestDatabase(), createTestDatabase()]);
  clean = createPool(cleanUrl, { max: 2 });
  fixture = createPool(fixtureUrl, { max: 2 });
  await execute(fixtureUrl, MISTAKES.map((mistake) => mistake.sql).join('\n'));
  writeFileSync(cleanTypes, await generateTypes(clean, { schemas: ['public'] }));
  writeFileSync(fixtureTypes, await generateTypes(fixture, { schemas: ['public'] }));
  await execute(fixtureUrl, UNTYPED.sql);
});
afterAll(async () => {
  await clean?.end();
  await fixture?.end();
});

const pairs = (findings: Finding[]) => findings.map((f) => `${f.id} ${f.object}`).sort();

describe('the advisor', () => {
  test('reports each class of mistake on the object at fault, at its rule’s level, and nothing else', async () => {
    const baseline = new Set(pairs(await runAdvisor(clean, { schemas: ['public'], typesPath: cleanTypes })));
    const findings = await runAdvisor(fixture, { schemas: ['public'], typesPath: fixtureTypes });
    const added = findings.filter((f) => !baseline.has(`${f.id} ${f.object}`));
    expect(pairs(added)).toEqual([...MISTAKES, UNTYPED].map((m) => `${m.id} ${m.object}`).sort());
    for (const finding of added) {
      const rule = RULES.find((r) => r.id === finding.id)!;
      expect(finding.level).toBe(rule.level);
      expect(finding.fix.length).toBeGreaterThan(10);
      expect(finding.detail).toContain(finding.object.split(' ')[0]!);
    }
    // Every class the advisor knows is shown by the fixture (types_not_generated below).
    const shown = new Set([...MISTAKES, UNTYPED].map((m) => m.id));
    expect(RULES.map((r) => r.id).filter((id) => !shown.has(id))).toEqual(['types_not_generated']);
  });

  test('finds nothing on the project’s own schema', async () => {
    const findings = await runAdvisor(clean, { schemas: ['public'], typesPath: cleanTypes });
    expect(findings).toEqual([]);
  });

  test('says once that the types were never generated when the file is missing', async () => {
    const missing = path.join(dir, 'nowhere', 'database.ts');
    const findings = await runAdvisor(clean, { schemas: ['public'], typesPath: missing });
    expect(findings.filter((f) => f.id.startsWith('types_'))).toEqual([
      expect.objectContaining({ id: 'types_not_generated', level: 'WARN', object: missing }),
    ]);
  });

  test('changes nothing: its rules run in a read-only transaction', async () => {
    const careless: Rule = {
      id: 'careless',
      level: 'INFO',
      what: 'a rule that writes',
      fix: 'none',
      async check({ db }) {
        await db.query('create table public.lint_written (id int)');
        return [];
      },
    };
    const options = { schemas: ['public'], typesPath: cleanTypes, rules: [careless] };
    await expect(runAdvisor(clean, options)).rejects.toThrow(/read-only transaction/);
    const { rows } = await clean.query(`select to_regclass('public.lint_written') as t`);
    expect(rows[0].t).toBeNull();
  });
});

describe('npm run db:lint', () => {
  const script = path.resolve('src/server/commands/db-lint.ts');
  const lint = (url: string, args: string[]) =>
    run(process.execPath, ['--import', 'tsx', script, ...args], {
      env: { ...process.env, DATABASE_URL: url, DATA_API_SCHEMAS: 'public', LOG_LEVEL: 'silent' },
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );

  test('exits 1 on errors with a table of every finding, and --json says the same', async () => {
    const table = await lint(fixtureUrl, ['--types', fixtureTypes]);
    expect(table.code).toBe(1);
    const [header] = table.stdout.split('\n');
    expect(header).toMatch(/^ID\s+LEVEL\s+OBJECT\s+FIX$/);
    for (const mistake of [...MISTAKES, UNTYPED]) {
      expect(table.stdout).toMatch(new RegExp(`^${mistake.id}\\s+(ERROR|WARN|INFO)\\s+`, 'm'));
    }
    expect(table.stdout).toMatch(/^6 errors, \d+ warnings?, \d+ notes?\.$/m);

    const json = await lint(fixtureUrl, ['--json', '--types', fixtureTypes]);
    expect(json.code).toBe(1);
    const parsed = JSON.parse(json.stdout) as { findings: Finding[]; counts: Record<string, number> };
    expect(parsed.findings).toEqual(
      await runAdvisor(fixture, { schemas: ['public'], typesPath: fixtureTypes }),
    );
    expect(parsed.counts.ERROR).toBe(6);
  }, 60_000);

  test('exits 0 on the project’s own schema; bad usage exits 2 and names the problem', async () => {
    const ok = await lint(cleanUrl, ['--types', cleanTypes]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^No findings: 0 errors, 0 warnings, 0 notes\.$/m);

    const unknownSchema = await lint(cleanUrl, ['--schema', 'public,nope']);
    expect(unknownSchema.code).toBe(2);
    expect(unknownSchema.stderr).toContain('No such schema: nope');
    const badSchema = await lint(cleanUrl, ['--schema', 'Public;drop']);
    expect(badSchema.code).toBe(2);
    const unknownFlag = await lint(cleanUrl, ['--fix']);
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.stderr).toContain('Unknown option: --fix');
    const noValue = await lint(cleanUrl, ['--types']);
    expect(noValue.code).toBe(2);
    expect(noValue.stderr).toContain('--types needs a value');
  }, 60_000);
});

describe('documentation', () => {
  test('docs/operations.md lists every rule with its level', () => {
    const operations = readFileSync('docs/operations.md', 'utf8');
    const section = operations.slice(operations.indexOf('## Security advisor'));
    expect(section.length).toBeGreaterThan(100);
    for (const rule of RULES)
      expect(section).toMatch(new RegExp(`\\| \`${rule.id}\` +\\| ${rule.level} +\\|`));
  });
});
