// In charge of generating the types file for the exposed schemas of a database: read the catalog,
// render, format. What `npm run gen:types` and the tests call.
import type { Pool } from '../db/pool.js';
import { readCatalog } from './catalog.js';
import { formatTypes } from './format.js';
import { renderTypes } from './typescript.js';

export interface GenerateOptions {
  /** the schemas to describe; the first is the helpers' default (public) */
  schemas: string[];
  /** written as `__InternalSupabase.PostgrestVersion`, as the Supabase CLI does for a known server */
  postgrestVersion?: string;
}

export async function generateTypes(
  pool: Pool,
  { schemas, postgrestVersion }: GenerateOptions,
): Promise<string> {
  const catalog = await readCatalog(pool, schemas);
  const missing = schemas.filter((s) => !catalog.schemas.includes(s));
  if (missing.length > 0) throw new Error(`No such schema: ${missing.join(', ')}`);
  const defaultSchema = schemas.includes('public') ? 'public' : schemas[0]!;
  return (await formatTypes(renderTypes(catalog, defaultSchema, postgrestVersion))).text;
}
