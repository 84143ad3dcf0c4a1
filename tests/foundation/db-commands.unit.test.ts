// The pieces of the database commands that need no database: the one order migrations apply in
// (core, then the application's as app/<file>, a misnamed application file refused), new
// migration names (never two in one second, never a guessed name), and the built-in prompt's
// reading of where a statement ends and its tables.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import {
  createAppMigration,
  migrationSlug,
  templateTable,
} from '../../src/server/db/app-migration-template.js';
import { MigrationFileError, readMigrations } from '../../src/server/db/migration-files.js';
import { endsStatement, formatResult } from '../../src/server/commands/sql-text.js';

const root = mkdtempSync(path.join(tmpdir(), 'tenantry-migration-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function folder(name: string, files: Record<string, string>): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(dir, file), text);
  return dir;
}

describe('the order migrations apply in', () => {
  test('core files first, then application files, each folder in name order; app ones recorded as app/<file>', () => {
    const core = folder('core', { '0002_b.sql': 'b', '0001_a.sql': 'a', 'notes.txt': '' });
    const app = folder('app', {
      '20250102000000_later.sql': 'later',
      '20250101000000_first.sql': 'first',
      'README.md': '',
      '.gitkeep': '',
    });
    const order = readMigrations([
      { kind: 'core', dir: core },
      { kind: 'app', dir: app },
    ]);
    expect(order.map((m) => m.name)).toEqual([
      '0001_a.sql',
      '0002_b.sql',
      'app/20250101000000_first.sql',
      'app/20250102000000_later.sql',
    ]);
    expect(order[2]).toMatchObject({ kind: 'app', file: '20250101000000_first.sql', sql: 'first' });
    expect(order[0]!.checksum).toMatch(/^[0-9a-f]{64}$/);
  });

  test('a missing application folder is an empty one', () => {
    const core = folder('core-only', { '0001_a.sql': 'a' });
    expect(
      readMigrations([
        { kind: 'core', dir: core },
        { kind: 'app', dir: path.join(root, 'nowhere') },
      ]).map((m) => m.name),
    ).toEqual(['0001_a.sql']);
  });

  test('an application file not named YYYYMMDDHHMMSS_name.sql is refused, naming it', () => {
    for (const bad of [
      '0001_roles_and_auth.sql',
      '2025_tasks.sql',
      '20250101000000_Tasks.sql',
      'tasks.sql',
    ]) {
      const app = folder(`bad-${bad}`, { '20250101000000_ok.sql': '', [bad]: '' });
      expect(() => readMigrations([{ kind: 'app', dir: app }])).toThrow(MigrationFileError);
      expect(() => readMigrations([{ kind: 'app', dir: app }])).toThrow(bad);
    }
  });
});

describe('new application migrations', () => {
  test('names are lower-case words joined by _, and nothing else is guessed at', () => {
    expect(migrationSlug('Create tasks')).toBe('create_tasks');
    expect(migrationSlug('add-due-date')).toBe('add_due_date');
    for (const bad of ['', '1tasks', 'tasks;drop', '../tasks', 'tâches', 'x'.repeat(51)]) {
      expect(() => migrationSlug(bad)).toThrow(/A migration name is/);
    }
    expect(templateTable('create_tasks')).toBe('tasks');
    expect(templateTable('tasks')).toBe('tasks');
  });

  test('files made in the same second take the next free seconds, in the order they were made', () => {
    const dir = path.join(root, 'new');
    const at = new Date('2025-03-04T05:06:07.890Z');
    const made = ['create_tasks', 'add_notes', 'create_tasks'].map((n) =>
      path.basename(createAppMigration(dir, n, at)),
    );
    expect(made).toEqual([
      '20250304050607_create_tasks.sql',
      '20250304050608_add_notes.sql',
      '20250304050609_create_tasks.sql',
    ]);
    expect(readdirSync(dir).sort()).toEqual(made);
  });
});

describe('the built-in prompt', () => {
  test('a statement ends at a semicolon outside strings, identifiers, comments and dollar quotes', () => {
    expect(endsStatement('select 1;')).toBe(true);
    expect(endsStatement('select 1; -- done')).toBe(true);
    expect(endsStatement('select 1')).toBe(false);
    expect(endsStatement("select ';'")).toBe(false);
    expect(endsStatement("select 'it''s;'")).toBe(false);
    expect(endsStatement("select 'it''s';")).toBe(true);
    expect(endsStatement("select E'a\\';")).toBe(false);
    expect(endsStatement("select E'a\\'';")).toBe(true);
    expect(endsStatement('select 1 as ";"')).toBe(false);
    expect(endsStatement('select 1 /* ; /* nested; */ still; */')).toBe(false);
    expect(endsStatement('select 1 /* ; */;')).toBe(true);
    expect(endsStatement('create function f() returns int as $$ select 1; $$')).toBe(false);
    expect(endsStatement('create function f() returns int as $body$ select 1; $body$ language sql;')).toBe(
      true,
    );
    expect(endsStatement('select $1;')).toBe(true);
  });

  test('rows print as an aligned table with numbers to the right, commands as their tag', () => {
    const fields = [
      { name: 'id', dataTypeID: 23 },
      { name: 'title', dataTypeID: 25 },
    ] as never;
    expect(
      formatResult({
        command: 'SELECT',
        rowCount: 2,
        fields,
        rows: [
          ['7', 'short'],
          ['1234', null],
        ],
      }),
    ).toBe(['  id  | title ', '------+-------', '    7 | short', ' 1234 |', '(2 rows)', ''].join('\n'));
    expect(formatResult({ command: 'CREATE', rowCount: null, fields: [], rows: [] })).toBe('CREATE');
    expect(formatResult({ command: 'INSERT', rowCount: 3, fields: [], rows: [] })).toBe('INSERT 3');
  });
});
