'use server';
// The "Continue with <Provider>" buttons' action: a PKCE verifier goes into this browser's
// HttpOnly cookie, the identity service stores the flow and names the provider's page, and the
// browser goes there. The provider sends it back through /auth/v1/callback to /auth/confirm,
// which exchanges the code with this browser's verifier for the session.
import { redirect } from 'next/navigation';
import { isHttpError } from '@/server/http/errors';
import { requestContext } from '@/app/lib/client';
import { confirmUrl, startEmailFlow } from '@/app/lib/email-links';
import { flash } from '@/app/lib/flash';
import { safeNext, services } from '@/app/lib/session';

export async function providerSignInAction(form: FormData): Promise<void> {
  const { identity } = services();
  const provider = String(form.get('provider') ?? '');
  const next = safeNext(String(form.get('next') ?? ''));
  // Only a configured provider is ever asked for; anything else is a tampered form.
  if (!identity.oauthProviders().some((p) => p.name === provider)) {
    await flash('error', 'That sign-in option is not available');
    redirect('/sign-in');
  }
  let location: string;
  try {
    location = await identity.oauthAuthorize({
      provider,
      scopes: '',
      redirectTo: confirmUrl(next),
      referer: null,
      pkce: await startEmailFlow(),
      queryParams: {},
      linkingUserId: null,
      ip: (await requestContext()).ip,
    });
  } catch (error) {
    if (!isHttpError(error)) throw error;
    await flash(
      'error',
      error.status === 429
        ? 'Too many sign-in attempts from here; try again in a few minutes'
        : 'That sign-in service cannot be reached right now; try again in a moment',
    );
    redirect('/sign-in');
  }
  redirect(location);
}
