// GET /auth/confirm?code=…&next=/path: where e-mailed links (sign-up confirmation, password reset,
// sign-in link, e-mail change) come back to. The code is exchanged, with this browser's PKCE
// verifier, for a session stored in the cookies, and the browser goes on to `next`. A "Continue
// with <Provider>" sign-in comes back here the same way (with ?error= when refused).
//
// When it does not work, the page says what happened and offers the next step: a link already
// used or expired goes back to asking for a new one; a link opened in a browser other than the
// one that asked for it says what the link did there (an address confirmed or changed, which
// happened whichever browser opened it) or, for a reset or sign-in, offers a fresh link for this
// browser (/auth/other-browser).
import { NextResponse, type NextRequest } from 'next/server';
import { takeVerifier } from '@/app/lib/email-links';
import { flash } from '@/app/lib/flash';
import { requestContext } from '@/app/lib/client';
import { currentUser, safeNext, services, storeSession } from '@/app/lib/session';

export const dynamic = 'force-dynamic';

const PROVIDER_REFUSALS: Record<string, string> = {
  provider_email_needs_verification:
    'Your e-mail address is not verified with that provider; verify it there, or sign in another way',
  identity_already_exists: 'That account is already linked to another user',
  signup_disabled: 'New accounts cannot be created here at the moment',
  user_banned: 'This account is suspended',
  bad_oauth_state: 'That sign-in took too long or was already used; try again',
};

// The identity service's reasons for a failed e-mail link (GoTrue's error codes on the redirect).
const LINK_FAILURES = new Set(['otp_expired', 'flow_state_not_found', 'flow_state_expired']);

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
  const to = (path: string) => NextResponse.redirect(new URL(path, config.appUrl), 303);
  const isReset = next === '/reset-password';
  if (!code && params.has('error')) {
    // An e-mail link already used or past its time: the words say so, and the page is where a
    // new one is asked for.
    if (LINK_FAILURES.has(params.get('error_code') ?? '')) {
      await flash(
        'error',
        isReset
          ? 'That reset link was already used or has expired; ask for a new one'
          : 'That link was already used or has expired; sign in, or ask for a new link',
      );
      return to(isReset ? '/forgot-password' : '/sign-in');
    }
    // A sign-in with a provider that did not complete: said in the app's words, chosen by the code.
    await flash('error', providerRefusal(params.get('error_code')));
    return to('/sign-in');
  }
  const verifier = code ? await takeVerifier() : null;
  if (code && verifier) {
    try {
      const session = await identity.pkceGrant(code, verifier, await requestContext());
      await storeSession(session);
      return to(next);
    } catch {
      // A verifier of another request (the link of an earlier one) is told as below.
    }
  }
  if (code) {
    const stranded = await identity.strandedCode(code);
    // What the link did stands whichever browser opened it: an address proven or changed.
    if (stranded?.authenticationMethod === 'email/signup' || stranded?.authenticationMethod === 'invite') {
      await flash('notice', 'Your e-mail address is confirmed; sign in to continue');
      return to('/sign-in');
    }
    if (stranded?.authenticationMethod === 'email_change') {
      await flash('notice', `Your e-mail address is now ${stranded.email ?? 'changed'}`);
      return to((await currentUser()) ? '/settings/profile' : '/sign-in');
    }
    if (stranded) {
      const page = new URL('/auth/other-browser', config.appUrl);
      page.searchParams.set('code', code);
      page.searchParams.set('next', next);
      return NextResponse.redirect(page, 303);
    }
  }
  // The words are the app's own: nothing from the URL is shown.
  await flash('error', 'That link is invalid or has expired; ask for a new one');
  return to(isReset ? '/forgot-password' : '/sign-in');
}
