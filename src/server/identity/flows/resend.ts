// In charge of POST /resend: a new sign-up confirmation or e-mail change confirmation, replacing
// the previous link and code. Always `{}`, whether or not the address has an account or anything
// pending, and the per-address frequency (429 "... after N seconds.") applies to every address
// alike, so the answers never tell who is registered.
import { withService } from '../../db/transactions.js';
import { sendEmailAction, sendEmailChange } from '../email-actions.js';
import { authError, errors } from '../errors.js';
import { chargeAsIfSent } from '../mailer.js';
import type { PkceChallenge } from '../pkce.js';
import { chooseRedirect } from '../redirects.js';
import { normalizeEmail, SELECT_USER, type UserWithIdentities } from '../users.js';
import type { IdentityDeps } from './context.js';

export interface ResendInput {
  type: 'signup' | 'email_change' | 'sms' | 'phone_change';
  email?: string | undefined;
  phone?: string | undefined;
  pkce?: PkceChallenge | null;
  redirectTo?: string | undefined;
  referer?: string | null;
}

export async function resend(deps: IdentityDeps, input: ResendInput): Promise<Record<string, never>> {
  if (input.type === 'sms' && !input.phone) throw errors.validation('Type provided requires a phone number');
  if (input.type === 'signup' && !input.email)
    throw errors.validation('Type provided requires an email address');
  if (input.email && input.phone) {
    throw errors.validation('Only an email address or phone number should be provided.');
  }
  if (input.phone) throw authError(400, 'phone_provider_disabled', 'Phone logins are disabled');
  if (!input.email) throw errors.validation('Missing email address or phone number');
  const email = normalizeEmail(input.email);
  if (input.type !== 'signup' && input.type !== 'email_change') return {};
  const redirectTo = chooseRedirect(deps.redirects, input.redirectTo, input.referer);

  await withService(deps.pool, async (tx) => {
    const found = await tx.query<UserWithIdentities>(`${SELECT_USER} where u.email = $1 for update of u`, [
      email,
    ]);
    const user = found.rows[0];
    if (input.type === 'signup') {
      if (!user || user.email_confirmed_at) {
        await chargeAsIfSent(tx, deps.email.mail, 'confirmation', email);
        return;
      }
      await sendEmailAction(tx, deps.email, {
        action: 'signup',
        userId: user.id,
        address: email,
        redirectTo,
        pkce: input.pkce ?? null,
        // The same sign-up's e-mail again: it keeps what the e-mail it replaces asked for.
        proposal: 'carry',
        variables: { Data: user.raw_user_meta_data },
      });
      return;
    }
    if (!user?.email_change) {
      await chargeAsIfSent(tx, deps.email.mail, 'email_change', email);
      return;
    }
    await sendEmailChange(tx, deps.email, {
      userId: user.id,
      currentEmail: user.email,
      newEmail: user.email_change,
      secure: deps.settings.secureEmailChange,
      redirectTo,
      pkce: input.pkce ?? null,
      data: user.raw_user_meta_data,
    });
  });
  return {};
}
