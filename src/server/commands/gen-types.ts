// `npm run gen:types [-- --schema public] [--output types/database.ts | --stdout] [--postgrest-version 12]`:
// writes the TypeScript `Database` type of the exposed schema for `createClient<Database>()`, in the
// Supabase CLI's format, from the database the service uses (DATABASE_URL, or the embedded one in
// local mode), to types/database.ts unless told otherwise (typegen/output.ts says why there).
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { generateTypes } from '../typegen/generate.js';
import { DEFAULT_TYPES_OUTPUT } from '../typegen/output.js';
import { bootstrapCommand, option } from './bootstrap.js';

const argv = process.argv.slice(2);
if (argv.includes('--help')) {
  process.stdout.write(
    `usage: npm run gen:types -- [--schema public[,other]] [--output file.ts (default ${DEFAULT_TYPES_OUTPUT}) | --stdout] [--postgrest-version 12]\n`,
  );
  process.exit(0);
}
// By default, the schemas the data API exposes.
const schemas = (option(argv, 'schema') ?? process.env.DATA_API_SCHEMAS ?? 'public')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const output = argv.includes('--stdout') ? undefined : (option(argv, 'output') ?? DEFAULT_TYPES_OUTPUT);
const postgrestVersion = option(argv, 'postgrest-version');
if (postgrestVersion !== undefined && !/^\d+(\.\d+)*$/.test(postgrestVersion)) {
  process.stderr.write('--postgrest-version takes a version number, e.g. 12 or 13.0\n');
  process.exit(2);
}

const context = await bootstrapCommand();
try {
  const text = await generateTypes(context.pool, {
    schemas,
    ...(postgrestVersion ? { postgrestVersion } : {}),
  });
  if (output) {
    await mkdir(dirname(output), { recursive: true });
    await writeFile(output, text);
    process.stderr.write(`wrote the types of ${schemas.join(', ')} to ${output}\n`);
  } else {
    process.stdout.write(text);
  }
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await context.close();
}
