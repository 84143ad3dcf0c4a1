// In charge of POST /recover: a password recovery e-mail (link and code; a PKCE link when the
// client sent a challenge) if the address has an account, and always `200 {}`, with the
// per-address frequency applied to every address alike, so nothing tells who is registered.
// Following the link (verify type `recovery`) signs the user in; PUT /user then sets the password.
import { recordAccountEvent } from '../audit.js';
import { withService } from '../../db/transactions.js';
import { sendEmailAction } from '../email-actions.js';
import { chargeAsIfSent } from '../mailer.js';
import type { PkceChallenge } from '../pkce.js';
import { chooseRedirect } from '../redirects.js';
import { normalizeEmail, SELECT_USER, type UserWithIdentities } from '../users.js';
import type { IdentityDeps } from './context.js';

export interface RecoverInput {
  email: string;
  pkce?: PkceChallenge | null;
  redirectTo?: string | undefined;
  referer?: string | null;
}

export async function recover(deps: IdentityDeps, input: RecoverInput): Promise<Record<string, never>> {
  const email = normalizeEmail(input.email);
  const redirectTo = chooseRedirect(deps.redirects, input.redirectTo, input.referer);
  await withService(deps.pool, async (tx) => {
    const found = await tx.query<UserWithIdentities>(`${SELECT_USER} where u.email = $1 for update of u`, [
      email,
    ]);
    const user = found.rows[0];
    if (!user) {
      await chargeAsIfSent(tx, deps.email.mail, 'recovery', email);
      return;
    }
    await sendEmailAction(tx, deps.email, {
      action: 'recovery',
      userId: user.id,
      address: email,
      redirectTo,
      pkce: input.pkce ?? null,
      variables: { Data: user.raw_user_meta_data },
    });
    await recordAccountEvent(tx, {
      action: 'user_recovery_requested',
      userId: user.id,
      actor: { type: 'anonymous' },
    });
  });
  return {};
}
