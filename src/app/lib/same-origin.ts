// In charge of telling a request sent by this app's own pages from one another site made the
// browser send: the Origin header must be the app's origin (APP_URL), and where the browser says
// where the request came from (Sec-Fetch-Site) it must say same-origin. A request carrying
// neither is refused, since a change of state is never worth guessing about.

export function fromOwnPages(headers: { get(name: string): string | null }, appUrl: string): boolean {
  const origin = headers.get('origin');
  const site = headers.get('sec-fetch-site');
  if (site !== null && site !== 'same-origin') return false;
  if (origin === null) return site === 'same-origin';
  return origin === new URL(appUrl).origin;
}
