// GET /auth/confirm?code=…&next=/path: where e-mailed links (sign-up confirmation, password reset,
// sign-in link, e-mail change) come back to. The code is exchanged, with this browser's PKCE
// verifier, for a session stored in the cookies, and the browser goes on to `next`. A link that
// failed, expired, or was opened in another browser ends on the sign-in page with a message. A
// "Continue with <Provider>" sign-in comes back here the same way (with ?error= when refused).
import { NextResponse, type NextRequest } from 'next/server';
import { takeVerifier } from '@/app/lib/email-links';
import { flash } from '@/app/lib/flash';
import { requestContext } from '@/app/lib/client';
import { safeNext, services, storeSession } from '@/app/lib/session';

export const dynamic = 'force-dynamic';

const PROVIDER_REFUSALS: Record<string, string> = {
  provider_email_needs_verification:
    'Your e-mail address is not verified with that provider; verify it there, or sign in another way',
  identity_already_exists: 'That account is already linked to another user',
  signup_disabled: 'New accounts cannot be created here at the moment',
  user_banned: 'This account is suspended',
  bad_oauth_state: 'That sign-in took too long or was already used; try again',
};

function providerRefusal(code: string | null): string {
  const known = code !== null && Object.hasOwn(PROVIDER_REFUSALS, code);
  return known ? PROVIDER_REFUSALS[code]! : 'Sign-in with that provider did not complete; try again';
}

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
  // A sign-in with a provider that did not complete: said in the app's words, chosen by the code.
  if (!code && params.has('error')) {
    await flash('error', providerRefusal(params.get('error_code')));
    return NextResponse.redirect(new URL('/sign-in', config.appUrl), 303);
  }
  const verifier = code ? await takeVerifier() : null;
  if (code && verifier) {
    try {
      const session = await identity.pkceGrant(code, verifier, await requestContext());
      await storeSession(session);
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
