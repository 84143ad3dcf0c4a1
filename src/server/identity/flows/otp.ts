// In charge of POST /otp for e-mail addresses (supabase-js signInWithOtp), as GoTrue's Otp and
// MagicLink handlers do it: a confirmed account gets one e-mail carrying a magic link and a code
// (verify types `magiclink` / `email`); an unknown address becomes an account when create_user
// allows it, and it, like an unconfirmed one, gets the sign-up confirmation instead (verify types
// `signup` / `email`), or, with autoconfirm, the magic link at once. Always `{}` on success,
// an unknown address with create_user false included: it is charged like a sent magic link and
// gets nothing (GoTrue answers 422 otp_disabled there, which tells who has an account).
import { withService } from '../../db/transactions.js';
import { sendEmailAction } from '../email-actions.js';
import { errors } from '../errors.js';
import { chargeAsIfSent } from '../mailer.js';
import type { PkceChallenge } from '../pkce.js';
import { enforceLimits } from '../rate-limit.js';
import { chooseRedirect } from '../redirects.js';
import { insertUser, normalizeEmail, SELECT_USER, type UserWithIdentities } from '../users.js';
import type { IdentityDeps, RequestContext } from './context.js';

export interface OtpInput {
  email: string;
  /** GoTrue's create_user (supabase-js shouldCreateUser), true unless said otherwise */
  createUser: boolean;
  /** metadata for an account this request creates; an existing account's is left alone */
  data: Record<string, unknown>;
  pkce?: PkceChallenge | null;
  redirectTo?: string | undefined;
  referer?: string | null;
}

export async function signInWithOtp(
  deps: IdentityDeps,
  input: OtpInput,
  context: RequestContext,
): Promise<Record<string, never>> {
  const { settings } = deps;
  const email = normalizeEmail(input.email);
  if (context.ip) {
    // The same per-address budget as sign-up: an /otp for an unknown address is a sign-up.
    await enforceLimits(deps.pool, [
      {
        bucket: `signup:ip:${context.ip}`,
        max: settings.rateLimits.signUpPerAddress,
        windowSeconds: settings.rateLimits.windowSeconds,
      },
    ]);
  }
  const redirectTo = chooseRedirect(deps.redirects, input.redirectTo, input.referer);

  await withService(deps.pool, async (tx) => {
    const found = await tx.query<UserWithIdentities>(`${SELECT_USER} where u.email = $1 for update of u`, [
      email,
    ]);
    let user = found.rows[0] ?? null;
    // GoTrue refuses this one request for unknown addresses (422 otp_disabled), which lets anyone
    // tell registered addresses from unknown ones. Here it costs what a magic link to a known
    // address costs (its frequency slot, the hourly count) and answers the same; nothing is sent.
    if (!user && !input.createUser) {
      await chargeAsIfSent(tx, deps.email.mail, 'recovery', email);
      return;
    }
    if (!user) {
      if (settings.disableSignup) throw errors.signupDisabled();
      // No password: the account signs in by e-mail until its owner sets one.
      user = await insertUser(tx, {
        email,
        passwordHash: null,
        confirmed: settings.autoconfirm,
        userMetadata: input.data,
      });
      if (!user) throw errors.emailExists(); // a concurrent sign-up took the address
    }
    const common = {
      userId: user.id,
      address: email,
      redirectTo,
      pkce: input.pkce ?? null,
      // A sign-in link sets no password: an unconfirmed account it proves is left with none.
      proposal: { passwordHash: null, userMetadata: input.data },
      variables: { Data: user.raw_user_meta_data },
    };
    // Unconfirmed without autoconfirm: the confirmation e-mail, which signs in just the same.
    if (!user.email_confirmed_at && !settings.autoconfirm) {
      await sendEmailAction(tx, deps.email, { ...common, action: 'signup' });
      return;
    }
    await sendEmailAction(tx, deps.email, { ...common, action: 'magiclink' });
  });
  return {};
}
