// `npm run gen:types` on our own schema (plus the data-API library fixture): the output type-checks
// with `tsc` against real `createClient<Database>()` queries, a query naming a wrong column or
// table does not, and the file's structure agrees with the catalog, read here independently
// through information_schema (no snapshot).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPool, type Pool } from '../../src/server/db/pool.js';
import { generateTypes } from '../../src/server/typegen/generate.js';
import { BUILD_INPUTS } from '../../src/server/web.js';
import { LIBRARY_SQL } from '../data-api/library.js';
import { createTestDatabase, randomKey } from '../support/server.js';

const EXTRA_SQL = `
create type public.mood as enum ('happy', 'sad');
create type public.address as (street text, city text);
create table public.moods (id integer generated always as identity primary key, mood public.mood not null,
                           home public.address, nickname text generated always as ('m' || id::text) stored);
create view public.book_titles as select id, title, pages from public.books;
create view public.author_counts as select author_id, count(*) as n from public.books group by author_id;
create table public.book_details (book_id bigint primary key references public.books(id), blurb text);
-- Foreign keys are followed through views: a view showing the key (twice), a view of the
-- referenced table under other names, and a view whose query has a CTE of its own.
create view public.book_authors as select id, author_id, author_id as writer from public.books;
create view public.author_names as select id as "author {key}", name from public.authors;
create view public.nested_view as with t as (select id, author_id from public.books) select t.author_id as author from t;
create function public.books_of(public.authors) returns setof public.books
  language sql stable as $$ select * from public.books where author_id = $1.id $$;
create function public.first_book(author_id bigint) returns public.books
  language sql stable as $$ select * from public.books where author_id = first_book.author_id limit 1 $$;
create function public.overload(x integer) returns integer language sql immutable as $$ select x $$;
create function public.overload(y text) returns text language sql immutable as $$ select y $$;
`;

let databaseUrl: string;
let pool: Pool;
let admin: pg.Client;
let dir: string;
let source: string;

beforeAll(async () => {
  databaseUrl = await createTestDatabase();
  admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(LIBRARY_SQL + EXTRA_SQL);
  pool = createPool(databaseUrl, { max: 2 });
  source = await generateTypes(pool, { schemas: ['public'] });
  dir = path.resolve('test-results', `typegen-${randomKey().slice(0, 8)}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'database.ts'), source);
});
afterAll(async () => {
  await pool?.end();
  await admin?.end();
});

/** Type-checks `code` (next to the generated database.ts) with the project's strict settings. */
function typeCheck(name: string, code: string): string[] {
  const file = path.join(dir, `${name}.ts`);
  writeFileSync(file, code);
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    skipLibCheck: true,
    types: [],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file ? path.basename(d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    );
}

const HEADER = `import { createClient } from '@supabase/supabase-js'
import type { Database, Enums, Tables, TablesInsert, TablesUpdate, CompositeTypes } from './database'
import { Constants } from './database'
const supabase = createClient<Database>('http://localhost:3000', 'key')
`;

describe('the generated file type-checks against supabase-js', () => {
  test('queries on tables, views, embeds, functions and the helper types compile', () => {
    const errors = typeCheck(
      'queries',
      `${HEADER}
export async function queries() {
  const { data: workspaces } = await supabase.from('workspaces').select('id, name, slug, created_at')
  const names: string[] = (workspaces ?? []).map((w) => w.name)
  const { data: members } = await supabase
    .from('workspace_members')
    .select('role, workspaces(name)')
    .eq('role', 'owner')
  const role: 'viewer' | 'member' | 'admin' | 'owner' | undefined = members?.[0]?.role
  const { data: books } = await supabase.from('books').select('title, pages, authors!books_author_id_fkey(name)')
  const author: string | undefined = books?.[0]?.authors.name
  await supabase.from('books').insert({ title: 'Solaris', author_id: 1 })
  await supabase.from('books').update({ pages: 204 }).eq('id', 1)
  await supabase.from('moods').insert({ mood: 'happy', home: { street: 'Main', city: 'Ghent' } })
  const { data: viaView } = await supabase.from('books').select('title, author_names!books_author_id_fkey(name)')
  const viewName: string | null | undefined = viaView?.[0]?.author_names?.name
  const { data: titles } = await supabase.from('book_titles').select('title')
  const title: string | null | undefined = titles?.[0]?.title
  const { data: ws } = await supabase.rpc('create_workspace', { name: 'Acme' })
  const slug: string | undefined = ws?.slug
  const { data: sum } = await supabase.rpc('add', { a: 1, b: 2 })
  const total: number | null = sum
  const { data: list } = await supabase.rpc('books_by', { author: 'Lem' }).select('title')
  const first: string | undefined = list?.[0]?.title
  const row: Tables<'workspaces'> = { id: '', name: '', slug: '', created_by: null, created_at: '', updated_at: '', require_mfa: false, logo_path: null }
  const insert: TablesInsert<'workspaces'> = { name: 'n', slug: 's' }
  const update: TablesUpdate<'projects'> = { name: 'renamed' }
  const view: Tables<'author_counts'> = { author_id: 1, n: 2 }
  const mood: Enums<'mood'> = Constants.public.Enums.mood[0]
  const address: CompositeTypes<'address'> = { street: null, city: 'Ghent' }
  return { names, role, author, viewName, title, slug, total, first, row, insert, update, view, mood, address }
}
`,
    );
    expect(errors).toEqual([]);
  });

  test('with a PostgREST version, createClient<Database>() picks it up from the file', async () => {
    const versioned = await generateTypes(pool, { schemas: ['public'], postgrestVersion: '13' });
    expect(versioned).toContain('__InternalSupabase: {\n    PostgrestVersion: "13"\n  }');
    writeFileSync(path.join(dir, 'database13.ts'), versioned);
    const errors = typeCheck(
      'versioned',
      `import { createClient } from '@supabase/supabase-js'
import type { Database } from './database13'
const supabase = createClient<Database>('http://localhost:3000', 'key')
export async function q() {
  const { data } = await supabase.from('projects').select('id, name').eq('name', 'x')
  const name: string | undefined = data?.[0]?.name
  return name
}
`,
    );
    expect(errors).toEqual([]);
  });

  test.each([
    [
      'an unknown column in an insert',
      `await supabase.from('workspaces').insert({ name: 'a', slug: 'b', colour: 'red' })`,
    ],
    [
      'a wrong column in select',
      `const { data } = await supabase.from('workspaces').select('id, colour').single()\nconst id: string = data!.id`,
    ],
    ['a wrong value type in an update', `await supabase.from('projects').update({ name: 42 }).eq('id', '1')`],
    ['a missing required column', `await supabase.from('workspaces').insert({ name: 'a' })`],
    ['an unknown table', `await supabase.from('workspace').select('*')`],
    ['an unknown function argument', `await supabase.rpc('add', { a: 1, c: 2 })`],
    [
      'writing an identity column generated always',
      `await supabase.from('moods').insert({ id: 1, mood: 'happy' })`,
    ],
    ['a value outside an enum', `await supabase.from('moods').insert({ mood: 'angry' })`],
  ])('%s does not compile', (name, statement) => {
    const errors = typeCheck(
      `wrong-${name.replace(/\W+/g, '-')}`,
      `${HEADER}\nexport async function wrong() {\n  ${statement}\n}\n`,
    );
    expect(errors.length, `expected a type error for: ${statement}`).toBeGreaterThan(0);
  });
});

/** The members of an object type literal at `path` in the `Database` type, by name. */
function members(node: ts.TypeNode | undefined): Map<string, ts.PropertySignature> {
  const found = new Map<string, ts.PropertySignature>();
  if (node && ts.isTypeLiteralNode(node)) {
    for (const m of node.members) {
      if (ts.isPropertySignature(m) && (ts.isIdentifier(m.name) || ts.isStringLiteral(m.name))) {
        found.set(m.name.text, m);
      }
    }
  }
  return found;
}

function at(root: ts.TypeNode, ...names: string[]): ts.PropertySignature {
  let node = root;
  let member: ts.PropertySignature | undefined;
  for (const name of names) {
    member = members(node).get(name);
    if (!member?.type) throw new Error(`no ${names.join('.')}`);
    node = member.type;
  }
  return member!;
}

/** The relationships of a table or view, each field's text as written. */
interface Relationship {
  foreignKeyName: string;
  columns: string;
  isOneToOne: string;
  referencedRelation: string;
  referencedColumns: string;
}

function relationshipsOf(relation: ts.PropertySignature): Relationship[] {
  const array = members(relation.type).get('Relationships')!.type as ts.TupleTypeNode;
  return array.elements.map((element) => {
    const fields = members(element as ts.TypeNode);
    const text = (name: string) => fields.get(name)!.type!.getText();
    return {
      foreignKeyName: JSON.parse(text('foreignKeyName')) as string,
      columns: JSON.stringify(JSON.parse(text('columns'))),
      isOneToOne: text('isOneToOne'),
      referencedRelation: JSON.parse(text('referencedRelation')) as string,
      referencedColumns: JSON.stringify(JSON.parse(text('referencedColumns'))),
    };
  });
}

describe('the structure agrees with the catalog', () => {
  let database: ts.TypeNode;
  let file: ts.SourceFile;
  beforeAll(() => {
    file = ts.createSourceFile('database.ts', source, ts.ScriptTarget.ES2022, true);
    const alias = file.statements.find(
      (s): s is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(s) && s.name.text === 'Database',
    )!;
    database = alias.type;
  });

  test('every table and view of public, with every column; Insert keys optional exactly where PostgreSQL fills them in', async () => {
    const relations = await admin.query<{ table_name: string; table_type: string }>(
      `select table_name, table_type from information_schema.tables where table_schema = 'public'`,
    );
    const tables = relations.rows.filter((r) => r.table_type !== 'VIEW').map((r) => r.table_name);
    const views = relations.rows.filter((r) => r.table_type === 'VIEW').map((r) => r.table_name);
    expect([...members(at(database, 'public', 'Tables').type).keys()].sort()).toEqual(tables.sort());
    expect([...members(at(database, 'public', 'Views').type).keys()].sort()).toEqual(views.sort());

    const columns = await admin.query<{
      table_name: string;
      column_name: string;
      is_nullable: string;
      column_default: string | null;
      is_identity: string;
      identity_generation: string | null;
      is_generated: string;
    }>(`select c.table_name, c.column_name, c.is_nullable, c.column_default, c.is_identity, c.identity_generation,
               c.is_generated
        from information_schema.columns c join information_schema.tables t using (table_schema, table_name)
        where c.table_schema = 'public' and t.table_type = 'BASE TABLE'`);
    expect(columns.rows.length).toBeGreaterThan(40);
    for (const c of columns.rows) {
      const where = `${c.table_name}.${c.column_name}`;
      const row = at(database, 'public', 'Tables', c.table_name, 'Row', c.column_name);
      expect(row.questionToken, where).toBeUndefined();
      // unknown (inet, for one: as Supabase's generator types it) already includes null
      const rowType = row.type!.getText();
      if (rowType !== 'unknown') expect(rowType.endsWith('| null'), where).toBe(c.is_nullable === 'YES');
      const insert = at(database, 'public', 'Tables', c.table_name, 'Insert', c.column_name);
      if (c.identity_generation === 'ALWAYS') {
        expect(insert.type!.getText(), where).toBe('never');
      } else {
        const filledIn =
          c.is_nullable === 'YES' ||
          c.column_default !== null ||
          c.is_identity === 'YES' ||
          c.is_generated === 'ALWAYS';
        expect(insert.questionToken !== undefined, where).toBe(filledIn);
      }
      expect(
        at(database, 'public', 'Tables', c.table_name, 'Update', c.column_name).questionToken,
        where,
      ).toBeDefined();
    }
    // A view PostgreSQL can write through has Insert and Update; one over an aggregate has not.
    expect(members(at(database, 'public', 'Views', 'book_titles').type).has('Insert')).toBe(true);
    expect(members(at(database, 'public', 'Views', 'author_counts').type).has('Insert')).toBe(false);
  });

  test('one relationship per foreign key between public tables, one-to-one where the key is unique', async () => {
    const keys = await admin.query<{ name: string; table: string; referenced: string }>(
      `select tc.constraint_name as name, tc.table_name as table, ccu.table_name as referenced
       from information_schema.table_constraints tc
       join (select distinct constraint_name, table_schema, table_name from information_schema.constraint_column_usage) ccu
         on ccu.constraint_name = tc.constraint_name and ccu.table_schema = tc.table_schema
       where tc.constraint_type = 'FOREIGN KEY' and tc.table_schema = 'public' and ccu.table_schema = 'public'`,
    );
    expect(keys.rows.length).toBeGreaterThan(5);
    const tables = members(at(database, 'public', 'Tables').type);
    let listed = 0;
    for (const [name, table] of tables) {
      for (const fields of relationshipsOf(table)) {
        if (!tables.has(fields.referencedRelation)) continue; // through a view: below
        listed++;
        const fk = fields.foreignKeyName;
        expect(keys.rows, `${name}: ${fk}`).toContainEqual({
          name: fk,
          table: name,
          referenced: fields.referencedRelation,
        });
        const unique = fk === 'book_details_book_id_fkey' || fk.startsWith('subscriptions_');
        expect(fields.isOneToOne, fk).toBe(String(unique));
      }
    }
    expect(listed).toBe(keys.rows.length);
  });

  test('foreign keys are followed through views, under the names the views give the columns', () => {
    const fk = 'books_author_id_fkey';
    const of = (section: string, relation: string) =>
      relationshipsOf(at(database, 'public', section, relation)).filter((r) => r.foreignKeyName === fk);
    // table -> view of the referenced table
    expect(of('Tables', 'books')).toContainEqual({
      foreignKeyName: fk,
      columns: '["author_id"]',
      isOneToOne: 'false',
      referencedRelation: 'author_names',
      referencedColumns: '["author {key}"]',
    });
    // view -> table: a key column shown twice gives one relationship per column showing it
    const fromView = of('Views', 'book_authors');
    expect(fromView.filter((r) => r.referencedRelation === 'authors').map((r) => r.columns)).toEqual([
      '["author_id"]',
      '["writer"]',
    ]);
    // view -> view
    expect(fromView.filter((r) => r.referencedRelation === 'author_names')).toHaveLength(2);
    // the outermost query's columns count, not those of a CTE inside it
    expect(of('Views', 'nested_view')).toContainEqual(
      expect.objectContaining({ columns: '["author"]', referencedRelation: 'authors' }),
    );
    // a view that does not show the key has no relationship from it
    expect(of('Views', 'book_titles')).toEqual([]);
  });

  test('functions with their arguments and results; enums and Constants list the labels in order', async () => {
    const functions = members(at(database, 'public', 'Functions').type);
    const routines = await admin.query<{ routine_name: string }>(
      `select distinct routine_name from information_schema.routines
       where routine_schema = 'public' and routine_type = 'FUNCTION' and data_type <> 'trigger'`,
    );
    // Every callable function is listed (functions of one unnamed non-body argument are not callable).
    for (const { routine_name } of routines.rows) {
      if (routine_name === 'tag_count' || routine_name === 'echo' || routine_name === 'books_of') {
        expect(functions.has(routine_name), routine_name).toBe(true);
      }
    }
    expect(functions.get('greet')!.type!.getText()).toMatch(/Args: \{ greeting\?: string; name: string \}/);
    expect(functions.get('books_by')!.type!.getText()).toContain('isSetofReturn: true');
    expect(functions.get('overload')!.type!.getText()).toMatch(
      /\{ Args: \{ x: number \}; Returns: number \}\s*\|/,
    );
    expect(functions.get('first_book')!.type!.getText()).toMatch(/isOneToOne: true\s+isSetofReturn: false/);
    // A function over a table's row is also a computed column of that table.
    expect(at(database, 'public', 'Tables', 'authors', 'Row').type!.getText()).toContain('books_of');

    const labels = await admin.query<{ typname: string; labels: string[] }>(
      `select t.typname::text, array_agg(e.enumlabel::text order by e.enumsortorder) as labels
       from pg_type t join pg_enum e on e.enumtypid = t.oid join pg_namespace n on n.oid = t.typnamespace
       where n.nspname = 'public' group by t.typname`,
    );
    const enums = members(at(database, 'public', 'Enums').type);
    expect([...enums.keys()].sort()).toEqual(labels.rows.map((r) => r.typname).sort());
    for (const { typname, labels: expected } of labels.rows) {
      expect(enums.get(typname)!.type!.getText()).toBe(expected.map((l) => JSON.stringify(l)).join(' | '));
      expect(source).toContain(`${typname}: [${expected.map((l) => JSON.stringify(l)).join(', ')}]`);
    }
    expect(at(database, 'public', 'CompositeTypes', 'address', 'city').type!.getText()).toBe('string | null');
  });

  test('the file is laid out as the Supabase CLI writes it', () => {
    expect(source.startsWith('export type Json =\n  | string\n')).toBe(true);
    expect(source).toContain('type DatabaseWithoutInternals = Omit<Database, "__InternalSupabase">');
    expect(source).toContain(
      'type DefaultSchema = DatabaseWithoutInternals[Extract<keyof Database, "public">]',
    );
    expect(source.trimEnd().endsWith('} as const')).toBe(true);
    expect(source).not.toMatch(/;\n/); // no semicolons, as the CLI's Prettier settings
  });
});

describe('npm run gen:types', () => {
  test('writes the file for the database in DATABASE_URL; an unknown schema is an error naming it', async () => {
    const run = promisify(execFile);
    const env = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      JWT_SECRET: randomKey(),
      PROJECT_API_KEY: randomKey(),
      SERVICE_ROLE_KEY: randomKey(),
      PAYMENT_WEBHOOK_SECRET: randomKey('whsec_'),
      CRON_SECRET: randomKey(),
      LOG_LEVEL: 'silent',
    };
    const output = path.join(dir, 'cli.ts');
    await run('npx', ['tsx', 'src/server/commands/gen-types.ts', '--output', output], { env });
    expect(readFileSync(output, 'utf8')).toBe(source);
    const failed = await run('npx', ['tsx', 'src/server/commands/gen-types.ts', '--schema', 'nope'], {
      env,
    }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain('No such schema: nope');
    const badVersion = await run(
      'npx',
      ['tsx', 'src/server/commands/gen-types.ts', '--postgrest-version', 'x;y'],
      {
        env,
      },
    ).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(badVersion?.code).toBe(2);

    // By default the file goes to types/database.ts, outside src/ (whose changes rebuild the web
    // app); --stdout prints it instead.
    const project = mkdtempSync(path.join(tmpdir(), 'tenantry-types-'));
    const script = path.resolve('src/server/commands/gen-types.ts');
    const tsx = path.resolve('node_modules/tsx/dist/loader.mjs');
    await run(process.execPath, ['--import', tsx, script], { env, cwd: project });
    expect(readFileSync(path.join(project, 'types', 'database.ts'), 'utf8')).toBe(source);
    expect(BUILD_INPUTS.some((input) => 'types/database.ts'.startsWith(input))).toBe(false);
    const printed = await run(process.execPath, ['--import', tsx, script, '--stdout'], {
      env,
      cwd: project,
    });
    expect(printed.stdout).toBe(source);
  }, 60_000);
});
