'use server';
// Server actions for passkeys and security keys. Each ceremony has two steps because the
// authenticator runs in the browser between them: the options come from here, the browser's
// answer comes back here, and the identity service checks it. Adding or removing a passkey,
// signing in with one (the session goes into the cookies), adding a security key as the second
// step (recovery codes are made with the first one), and using it at the second step.
import { revalidatePath } from 'next/cache';
import { redirect } from 'next/navigation';
import { requestContext } from '@/app/lib/client';
import { idField } from '@/app/lib/fields';
import { flash } from '@/app/lib/flash';
import {
  currentUser,
  halfSignedInUser,
  safeNext,
  secondStepPath,
  services,
  storeSession,
} from '@/app/lib/session';
import { verifyAccessToken, type AccessTokenClaims } from '@/server/identity/access-tokens';
import { isHttpError } from '@/server/http/errors';

const SECURITY = '/settings/security';

/** What a ceremony's first step hands the browser: the options and the challenge to answer. */
export type Ceremony<O = unknown> =
  { challengeId: string; options: O; factorId?: string } | { error: string };

/** A WebAuthn factor's challenge, as the browser's ceremony needs it (adding a key, or the second step). */
async function factorCeremony(user: { token: AccessTokenClaims }, factorId: string): Promise<Ceremony> {
  const challenge = await services().identity.challengeFactor(
    user.token,
    factorId,
    (await requestContext()).ip,
  );
  if (!('webauthn' in challenge)) throw new Error('a WebAuthn factor answers WebAuthn options');
  return { factorId, challengeId: challenge.id, options: challenge.webauthn.credential_options.publicKey };
}

function refusal(error: unknown, fallback: string): { error: string } {
  if (!isHttpError(error)) return { error: fallback };
  switch (error.code) {
    case 'webauthn_verification_failed':
      return { error: 'Your device’s answer could not be checked; try again' };
    case 'webauthn_challenge_expired':
    case 'webauthn_challenge_not_found':
    case 'mfa_challenge_expired':
    case 'mfa_factor_not_found':
      return { error: 'That took too long; try again' };
    case 'webauthn_credential_exists':
      return { error: 'This passkey or key is already added' };
    default:
      return { error: error.message };
  }
}

async function signedIn() {
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=${encodeURIComponent(SECURITY)}`);
  return user;
}

/** Adding a passkey, step 1. */
export async function passkeyRegistrationOptions(): Promise<Ceremony> {
  const user = await signedIn();
  try {
    const started = await services().identity.passkeyRegistrationStart(user.token);
    return { challengeId: started.challenge_id, options: started.options };
  } catch (error) {
    return refusal(error, 'Could not start adding a passkey; try again');
  }
}

/** Adding a passkey, step 2: the browser's answer. */
export async function finishPasskeyRegistration(
  challengeId: string,
  credential: unknown,
): Promise<{ error?: string }> {
  const user = await signedIn();
  try {
    await services().identity.passkeyRegistrationFinish(user.token, { challengeId, credential });
  } catch (error) {
    return refusal(error, 'Could not add the passkey; try again');
  }
  await flash('notice', 'Passkey added. Next time, sign in with it instead of your password.');
  revalidatePath(SECURITY);
  return {};
}

export async function removePasskeyAction(form: FormData): Promise<never> {
  const user = await signedIn();
  const id = idField.safeParse(form.get('passkey_id'));
  try {
    if (!id.success) throw new Error('stale page');
    await services().identity.deletePasskey(user.token, id.data);
  } catch (error) {
    await flash(
      'error',
      isHttpError(error) ? error.message : 'This page is out of date; reload it and try again',
    );
    redirect(SECURITY);
  }
  await flash('notice', 'Passkey removed');
  redirect(SECURITY);
}

/** Signing in with a passkey, step 1: any passkey of this site will do. */
export async function passkeySignInOptions(): Promise<Ceremony> {
  try {
    const started = await services().identity.passkeyAuthenticationStart(await requestContext());
    return { challengeId: started.challenge_id, options: started.options };
  } catch (error) {
    return refusal(error, 'Could not start signing in with a passkey; try again');
  }
}

/** Signing in with a passkey, step 2: the session goes into the cookies; the second step follows if set up. */
export async function finishPasskeySignIn(
  challengeId: string,
  credential: unknown,
  next: string | null,
): Promise<{ error?: string }> {
  let session;
  try {
    session = await services().identity.passkeyAuthenticationFinish(
      { challengeId, credential },
      await requestContext(),
    );
  } catch (error) {
    if (isHttpError(error) && error.code === 'webauthn_verification_failed') {
      return { error: 'That passkey is not registered here, or was removed. Sign in with your password.' };
    }
    return refusal(error, 'Could not sign in with the passkey; try again');
  }
  await storeSession(session);
  const factors = (session.user.factors ?? []) as { status?: string }[];
  if (factors.some((f) => f.status === 'verified')) redirect(secondStepPath(safeNext(next)));
  redirect(safeNext(next));
}

/** A security key as the second step, step 1: a new factor and its challenge to create the credential. */
export async function securityKeyOptions(): Promise<Ceremony> {
  const user = await signedIn();
  const { identity } = services();
  try {
    const factor = await identity.enrollFactor(user.token, { factorType: 'webauthn', friendlyName: '' });
    return await factorCeremony(user, factor.id);
  } catch (error) {
    return refusal(error, 'Could not start adding a security key; try again');
  }
}

/** Step 2: the key is registered, the session rises to aal2, and the recovery codes are made once. */
export async function finishSecurityKey(
  factorId: string,
  challengeId: string,
  credential: unknown,
): Promise<{ error?: string; recoveryCodes?: string[] }> {
  const user = await signedIn();
  const { identity, signer } = services();
  try {
    const session = await identity.verifyFactor(user.token, factorId, {
      challengeId,
      code: '',
      ip: (await requestContext()).ip,
      webauthn: { type: 'create', credentialResponse: credential },
    });
    await storeSession(session);
    const claims = await verifyAccessToken(signer, session.access_token);
    return { recoveryCodes: await identity.regenerateRecoveryCodes(claims) };
  } catch (error) {
    return refusal(error, 'Could not add the security key; try again');
  }
}

/** The second step at sign-in with a security key, step 1. */
export async function secondStepKeyOptions(): Promise<Ceremony> {
  const user = await halfSignedInUser();
  if (!user) return { error: 'Sign in again' };
  const { identity } = services();
  try {
    const { factors } = await identity.factorsOf(user.userId);
    const factor = factors.find((f) => f.status === 'verified' && f.factor_type === 'webauthn');
    if (!factor) return { error: 'No security key is set up for this account' };
    return await factorCeremony(user, factor.id);
  } catch (error) {
    return refusal(error, 'Could not ask for your security key; try again');
  }
}

/** Step 2: the key's signature raises the session to aal2. */
export async function finishSecondStepKey(
  factorId: string,
  challengeId: string,
  credential: unknown,
  next: string | null,
): Promise<{ error?: string }> {
  const user = await halfSignedInUser();
  if (!user) redirect('/sign-in');
  try {
    const session = await services().identity.verifyFactor(user.token, factorId, {
      challengeId,
      code: '',
      ip: (await requestContext()).ip,
      webauthn: { type: 'request', credentialResponse: credential },
    });
    await storeSession(session);
  } catch (error) {
    return refusal(error, 'Could not check your security key; try again');
  }
  redirect(safeNext(next));
}
