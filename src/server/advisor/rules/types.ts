// In charge of the generated types keeping up with the exposed schemas: every table and view the
// data API serves should have its type in the file `npm run gen:types` writes, or
// createClient<Database>() refuses (or mistypes) queries of it. The relations compared are those
// gen:types itself describes: tables, partitioned and foreign tables, views, materialized views.
import { readFile } from 'node:fs/promises';
import type { Finding, Rule } from '../finding.js';
import { relationsInTypes } from '../types-file.js';

async function readTypes(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

export const typesNotGenerated: Rule = {
  id: 'types_not_generated',
  level: 'WARN',
  what: 'The generated types file does not exist (or holds no Database type): the exposed tables were never given their TypeScript types.',
  fix: 'Run npm run gen:types and commit the file.',
  async check({ typesPath }) {
    const source = await readTypes(typesPath);
    if (source !== null && relationsInTypes(source) !== null) return [];
    return [
      {
        id: this.id,
        level: this.level,
        object: typesPath,
        detail:
          source === null
            ? `${typesPath} does not exist: the types of the exposed tables were never generated.`
            : `${typesPath} holds no Database type.`,
        fix: `npm run gen:types (or pass the file the types are in with --types <path>).`,
      },
    ];
  },
};

export const typesMissingTable: Rule = {
  id: 'types_missing_table',
  level: 'WARN',
  what: 'A table or view in an exposed schema has no type in the generated types file: the file is older than the schema.',
  fix: 'Run npm run gen:types again and commit the file.',
  async check({ db, schemas, typesPath }) {
    const source = await readTypes(typesPath);
    const typed = source === null ? null : relationsInTypes(source);
    if (typed === null) return []; // types_not_generated says so once
    const { rows } = await db.query<{ schema: string; name: string; object: string }>(
      `select n.nspname as schema, c.relname as name, format('%I.%I', n.nspname, c.relname) as object
       from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       where n.nspname = any ($1::text[]) and c.relkind in ('r', 'p', 'f', 'v', 'm')
       order by 1, 2`,
      [schemas],
    );
    const findings: Finding[] = [];
    for (const relation of rows) {
      if (typed.get(relation.schema)?.has(relation.name)) continue;
      findings.push({
        id: this.id,
        level: this.level,
        object: relation.object,
        detail: `${relation.object} has no type in ${typesPath}, which is older than the schema.`,
        fix: `npm run gen:types and commit ${typesPath}.`,
      });
    }
    return findings;
  },
};
