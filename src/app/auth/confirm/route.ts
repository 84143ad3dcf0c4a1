// GET /auth/confirm?code=…&next=/path: where e-mailed links (sign-up confirmation, password reset,
// sign-in link, e-mail change) come back to. The code is exchanged, with this browser's PKCE
// verifier, for a session stored in the cookies, and the browser goes on to `next`. A link that
// failed, expired, or was opened in another browser ends on the sign-in page with a message.
import { NextResponse, type NextRequest } from 'next/server';
import { takeVerifier } from '@/app/lib/email-links';
import { flash } from '@/app/lib/flash';
import { requestContext } from '@/app/lib/client';
import { safeNext, services, storeSession } from '@/app/lib/session';

export const dynamic = 'force-dynamic';

export async function GET(request: NextRequest) {
  const params = request.nextUrl.searchParams;
  const next = safeNext(params.get('next'));
  const { config, identity } = services();
  const code = params.get('code');
  // The first of two e-mail change confirmations comes back without a code: the verifier is
  // kept for the second one.
  if (!code && params.has('message') && !params.has('error')) {
    await flash('notice', 'Confirmed; now open the link sent to your other address');
    return NextResponse.redirect(new URL(next, config.appUrl), 303);
  }
  const verifier = code ? await takeVerifier() : null;
  if (code && verifier) {
    try {
      const session = await identity.pkceGrant(code, verifier, await requestContext());
      await storeSession(session as never);
      return NextResponse.redirect(new URL(next, config.appUrl), 303);
    } catch {
      // told below, in the app's own words
    }
  }
  // The words are the app's own: nothing from the URL is shown.
  await flash(
    'error',
    code && !verifier
      ? 'Open the link in the browser you asked for it in, or sign in'
      : 'That link is invalid or has expired; ask for a new one',
  );
  return NextResponse.redirect(new URL('/sign-in', config.appUrl), 303);
}
