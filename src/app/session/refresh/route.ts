// /session/refresh?next=/path: renews an expiring session (rotating its refresh token) and returns
// to the page; a revoked or expired session is cleared and sent to sign in. Rotating is a change of
// state, so only a POST from the app's own pages does it (Origin and Sec-Fetch-Site checked): a
// link or a page on another site could otherwise sign the user out (each rotation spends the
// session's refresh allowance) or race their own refresh.
// Pages whose token is about to expire redirect here with a GET, which changes nothing: it answers
// a tiny page with a form that posts back here. The form submits itself only when the browser says
// the GET came from this app's pages or from the person (Sec-Fetch-Site same-origin or none); a
// navigation started by another site gets a Continue button instead, so another site cannot make
// the browser post it.
import { NextResponse, type NextRequest } from 'next/server';
import { requestContext } from '@/app/lib/client';
import { fromOwnPages } from '@/app/lib/same-origin';
import { readStoredSession, safeNext, services, storeSession } from '@/app/lib/session';

export const dynamic = 'force-dynamic';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page that posts back here: no state, nothing the query string can inject. */
function refreshPage(next: string, automatic: boolean): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="robots" content="noindex">
<title>Keeping you signed in · Tenantry</title>
<style>body{font:16px/1.5 system-ui,sans-serif;display:grid;place-items:center;min-height:90vh;margin:0;padding:0 1rem}button{font:inherit;min-height:44px;padding:0 1.25rem;cursor:pointer}</style>
</head>
<body>
<main>
<form id="refresh" method="post" action="/session/refresh">
<input type="hidden" name="next" value="${escapeHtml(next)}">
${
  automatic
    ? '<p>Keeping you signed in…</p>\n<noscript><button type="submit">Continue</button></noscript>'
    : '<h1 style="font-size:1.25rem">Continue to Tenantry</h1>\n<p>Your session needs renewing before this page opens.</p>\n<button type="submit">Continue</button>'
}
</form>
</main>
${automatic ? "<script>document.getElementById('refresh').submit()</script>" : ''}
</body>
</html>
`;
}

export async function GET(request: NextRequest) {
  const next = safeNext(request.nextUrl.searchParams.get('next'));
  const { config } = services();
  if (!(await readStoredSession())) {
    return NextResponse.redirect(new URL(`/sign-in?next=${encodeURIComponent(next)}`, config.appUrl), 303);
  }
  const site = request.headers.get('sec-fetch-site');
  const automatic = site === 'same-origin' || site === 'none';
  return new NextResponse(refreshPage(next, automatic), {
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' },
  });
}

export async function POST(request: NextRequest) {
  const { config, identity } = services();
  if (!fromOwnPages(request.headers, config.appUrl)) {
    return new NextResponse('Refused: this request did not come from Tenantry’s own pages.\n', {
      status: 403,
      headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
    });
  }
  const form = await request.formData().catch(() => null);
  const given = form?.get('next');
  const next = safeNext(typeof given === 'string' ? given : null);
  const session = await readStoredSession();
  if (session) {
    try {
      const fresh = await identity.refreshGrant(session.refresh_token, await requestContext());
      await storeSession(fresh);
      return NextResponse.redirect(new URL(next, config.appUrl), 303);
    } catch {
      // fall through: the session is over
    }
  }
  await storeSession(null);
  return NextResponse.redirect(new URL(`/sign-in?next=${encodeURIComponent(next)}`, config.appUrl), 303);
}
