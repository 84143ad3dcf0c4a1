// In charge of the colour theme a person picked: light, dark, or (no cookie) the system's. Kept
// in a cookie so the server renders the page in it and the first paint is already right.
import { cookies } from 'next/headers';
import { THEME_COOKIE, type Theme } from '@/app/lib/theme-cookie';

export async function chosenTheme(): Promise<Theme> {
  const value = (await cookies()).get(THEME_COOKIE)?.value;
  return value === 'light' || value === 'dark' ? value : 'system';
}
