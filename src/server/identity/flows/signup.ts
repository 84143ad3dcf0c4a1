// In charge of POST /signup: a new e-mail account, signed in at once with autoconfirm; otherwise
// the bare user, with the confirmation e-mail written to the outbox in the sign-up's own
// transaction (a PKCE sign-up's link ends in ?code=). An already confirmed address is never
// revealed without autoconfirm (GoTrue's obfuscated user); an unconfirmed one gets a new e-mail.
// The e-mail carries this sign-up's password and data: whoever follows it gets an account with
// those and nothing an earlier, unproven sign-up of the address set (unproven-accounts.ts).
import { withService } from '../../db/transactions.js';
import { sendEmailAction } from '../email-actions.js';
import { errors } from '../errors.js';
import { chargeAsIfSent } from '../mailer.js';
import { hashCallers } from '../hash-queue.js';
import type { PkceChallenge } from '../pkce.js';
import { enforceLimits } from '../rate-limit.js';
import { chooseRedirect } from '../redirects.js';
import { openSession } from '../sessions.js';
import {
  findUserById,
  insertUser,
  normalizeEmail,
  renderUser,
  SELECT_USER,
  type UserWithIdentities,
} from '../users.js';
import {
  checkPasswordStrength,
  tokenResponse,
  type IdentityDeps,
  type RequestContext,
  type TokenResponse,
} from './context.js';

export interface SignUpInput {
  email: string;
  password: string;
  data?: Record<string, unknown>;
  /** the client's PKCE challenge (flowType 'pkce'): the e-mail link then ends in ?code= */
  pkce?: PkceChallenge | null;
  /** where the e-mail link should land (emailRedirectTo); refused URLs fall back to the site URL */
  redirectTo?: string | undefined;
  referer?: string | null;
}

export async function signUp(
  deps: IdentityDeps,
  input: SignUpInput,
  context: RequestContext,
): Promise<TokenResponse | Record<string, unknown>> {
  const { settings } = deps;
  if (settings.disableSignup) throw errors.signupDisabled();
  checkPasswordStrength(settings, input.password);
  if (context.ip) {
    await enforceLimits(deps.pool, [
      {
        bucket: `signup:ip:${context.ip}`,
        max: settings.rateLimits.signUpPerAddress,
        windowSeconds: settings.rateLimits.windowSeconds,
      },
    ]);
  }
  const redirectTo = chooseRedirect(deps.redirects, input.redirectTo, input.referer);
  const passwordHash = await deps.passwords.hash(hashCallers.address(context.ip), input.password);
  return withService(deps.pool, async (tx) => {
    const created = await insertUser(tx, {
      email: input.email,
      passwordHash,
      confirmed: settings.autoconfirm,
      userMetadata: input.data ?? {},
    });
    if (created && settings.autoconfirm) {
      const session = await openSession(tx, created.id, 'password', context);
      // openSession stamped last_sign_in_at; the answer shows it, as GoTrue's does.
      return tokenResponse(deps, { ...created, last_sign_in_at: new Date() }, session);
    }
    let user: UserWithIdentities | null = created;
    if (!user) {
      if (settings.autoconfirm) throw errors.userAlreadyExists();
      const existing = await tx.query<UserWithIdentities>(
        `${SELECT_USER} where u.email = $1 for update of u`,
        [normalizeEmail(input.email)],
      );
      user = existing.rows[0] ?? null;
      // Without autoconfirm GoTrue answers a confirmed address with an obfuscated user, so
      // sign-up does not reveal who is registered; clients recognise it by the empty identities.
      if (!user || user.email_confirmed_at) {
        // Charged like a real confirmation e-mail, so a repeated sign-up is answered alike.
        await chargeAsIfSent(tx, deps.email.mail, 'confirmation', normalizeEmail(input.email));
        return obfuscatedUser(input.email, input.data ?? {});
      }
      // Unconfirmed: a new confirmation e-mail, the account untouched until the address is
      // proved (the caller has not proved to own it yet); this sign-up's password and data go
      // with the e-mail, and following it makes them the account's.
    }
    await sendEmailAction(tx, deps.email, {
      action: 'signup',
      userId: user.id,
      address: user.email!,
      redirectTo,
      pkce: input.pkce ?? null,
      proposal: { passwordHash, userMetadata: input.data ?? {} },
      variables: { Data: user.raw_user_meta_data },
    });
    return renderUser((await findUserById(tx, user.id))!);
  });
}

/** GoTrue's sanitizeUser: a made-up user with nothing real in it but what the caller sent. */
function obfuscatedUser(email: string, data: Record<string, unknown>): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    id: crypto.randomUUID(),
    aud: 'authenticated',
    role: '',
    email: normalizeEmail(email),
    phone: '',
    confirmation_sent_at: now,
    app_metadata: { provider: 'email', providers: ['email'] },
    user_metadata: data,
    identities: [],
    created_at: now,
    updated_at: now,
    is_anonymous: false,
  };
}
