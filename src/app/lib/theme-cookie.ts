// The theme cookie's name and values, shared by the server (which renders the page in the
// chosen theme) and the browser (which stores the choice). No secrets: it is a preference.
export const THEME_COOKIE = 'tenantry-theme';
export type Theme = 'light' | 'dark' | 'system';

/** Stores the choice for a year (or forgets it for "system") and applies it at once. */
export function applyTheme(theme: Theme): void {
  const secure = window.location.protocol === 'https:' ? '; Secure' : '';
  document.cookie =
    theme === 'system'
      ? `${THEME_COOKIE}=; Path=/; Max-Age=0; SameSite=Lax${secure}`
      : `${THEME_COOKIE}=${theme}; Path=/; Max-Age=31536000; SameSite=Lax${secure}`;
  if (theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}
