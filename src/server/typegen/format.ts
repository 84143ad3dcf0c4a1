// In charge of laying out generated types as the Supabase CLI does (Prettier for TypeScript, no
// semicolons, double quotes), so a file regenerated here differs from one the CLI wrote only where
// the schema does. Prettier is a development dependency: without it the text stays valid but unformatted.
import type { renderTypes } from './typescript.js';

export async function formatTypes(
  parts: ReturnType<typeof renderTypes>,
): Promise<{ text: string; formatted: boolean }> {
  let format = async (source: string) => `${source.trim()}\n`;
  let formatted = false;
  try {
    const prettier = await import('prettier');
    format = (source) => prettier.format(source, { parser: 'typescript', semi: false });
    formatted = true;
  } catch {
    // not installed (a production install): keep the unformatted text
  }
  const text = `${await format(parts.head)}\n${parts.helpers}\n${await format(parts.tail)}`;
  return { text, formatted };
}
