// In charge of where generated types go by default: types/database.ts at the project's root, outside
// src/, whose changes rebuild the web app (src/server/web.ts BUILD_INPUTS); application code imports
// it from there (`import type { Database } from '../types/database'`). TYPES_OUTPUT names another
// file for both gen:types and db:lint.
export const DEFAULT_TYPES_OUTPUT = process.env.TYPES_OUTPUT ?? 'types/database.ts';
