// `npm run db:lint [-- --json] [--types types/database.ts] [--schema public[,other]]`: the security
// and performance advisor over the live database (DATABASE_URL, or the embedded one in local mode,
// found as the other db:* commands find it; no secrets needed): prints its findings (id, level,
// object, fix) and exits 1 when any is an ERROR, 2 on bad usage. It reads the catalog in a
// read-only transaction and changes nothing (it applies no migrations either).
import { exitCode, toJson, toTable } from '../advisor/report.js';
import { RULES } from '../advisor/rules.js';
import { AdvisorInputError, runAdvisor } from '../advisor/run.js';
import { ConfigError, loadDatabaseConfig, type DatabaseConfig } from '../config.js';
import { createPool, poolOptionsFrom } from '../db/pool.js';
import { DEFAULT_TYPES_OUTPUT } from '../typegen/output.js';
import { option } from './bootstrap.js';
import { openCommandDatabase } from './db-context.js';

const USAGE =
  `usage: npm run db:lint -- [--json] [--types <file> (default ${DEFAULT_TYPES_OUTPUT})] [--schema public[,other]] [--rules]\n` +
  'Exposed schemas default to DATA_API_SCHEMAS, else public. Exit code: 0 without errors, 1 with errors, 2 on bad usage.\n';
const FLAGS = new Set(['--json', '--rules', '--help']);
const VALUED = new Set(['--types', '--schema']);

function refuse(message: string): never {
  process.stderr.write(`${message}\n${USAGE}`);
  process.exit(2);
}

const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i]!;
  const name = arg.split('=')[0]!;
  if (FLAGS.has(arg)) continue;
  if (!VALUED.has(name)) refuse(`Unknown option: ${arg}`);
  if (arg.includes('=')) continue;
  const value = argv[i + 1];
  if (value === undefined || value.startsWith('--')) refuse(`${arg} needs a value`);
  i++;
}
if (argv.includes('--help')) {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (argv.includes('--rules')) {
  for (const rule of RULES)
    process.stdout.write(`${rule.id} (${rule.level}): ${rule.what}\n  fix: ${rule.fix}\n`);
  process.exit(0);
}

const schemas = (option(argv, 'schema') ?? process.env.DATA_API_SCHEMAS ?? 'public')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
if (schemas.length === 0 || !schemas.every((s) => /^[a-z_][a-z0-9_$]{0,62}$/.test(s)))
  refuse('Exposed schemas are a comma-separated list of lower-case schema names, e.g. public,personal');
const typesPath = option(argv, 'types') ?? DEFAULT_TYPES_OUTPUT;
if (typesPath === '') refuse('--types needs a file');

// Exit 1 says "errors found", so a configuration the command cannot run with is bad usage (2).
let config: DatabaseConfig;
try {
  config = loadDatabaseConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  refuse(error.message);
}
const database = await openCommandDatabase(config);
const pool = createPool(database.url, { ...poolOptionsFrom(config.database), max: 1 });
try {
  const findings = await runAdvisor(pool, { schemas, typesPath });
  process.stdout.write(argv.includes('--json') ? toJson(findings) : toTable(findings));
  process.exitCode = exitCode(findings);
} catch (error) {
  if (!(error instanceof AdvisorInputError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exitCode = 2;
} finally {
  await pool.end();
  await database.close();
}
