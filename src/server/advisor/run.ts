// In charge of running the advisor's rules over a live database without changing it: one
// connection, one read-only transaction (rolled back), an empty search_path so PostgreSQL prints
// every name outside pg_catalog schema-qualified, and the findings sorted by level.
import type { Pool } from '../db/pool.js';
import { LEVELS, type Finding, type Rule } from './finding.js';
import { RULES } from './rules.js';

export interface AdvisorOptions {
  /** the schemas the data API exposes */
  schemas: string[];
  /** the generated types file to compare the exposed tables with */
  typesPath: string;
  /** the rules to run (all of them unless told) */
  rules?: readonly Rule[];
}

/** Bad input to the advisor (a schema the database does not have): nothing was checked. */
export class AdvisorInputError extends Error {}

export async function runAdvisor(pool: Pool, options: AdvisorOptions): Promise<Finding[]> {
  const client = await pool.connect();
  try {
    await client.query('begin transaction read only');
    await client.query(`set local search_path = ''`);
    const { rows } = await client.query<{ missing: string[] }>(
      `select array(select s from unnest($1::text[]) s
                    where not exists (select 1 from pg_catalog.pg_namespace n where n.nspname = s)) as missing`,
      [options.schemas],
    );
    const missing = rows[0]?.missing ?? [];
    if (missing.length > 0) throw new AdvisorInputError(`No such schema: ${missing.join(', ')}`);
    const findings: Finding[] = [];
    const context = { db: client, schemas: options.schemas, typesPath: options.typesPath };
    for (const rule of options.rules ?? RULES) findings.push(...(await rule.check(context)));
    return sortFindings(findings);
  } finally {
    await client.query('rollback').catch(() => undefined);
    client.release();
  }
}

const RULE_ORDER = new Map(RULES.map((rule, index) => [rule.id, index]));

export function sortFindings(findings: Finding[]): Finding[] {
  return [...findings].sort(
    (a, b) =>
      LEVELS.indexOf(a.level) - LEVELS.indexOf(b.level) ||
      (RULE_ORDER.get(a.id) ?? 0) - (RULE_ORDER.get(b.id) ?? 0) ||
      a.object.localeCompare(b.object),
  );
}
