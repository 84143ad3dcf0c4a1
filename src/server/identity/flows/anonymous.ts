// In charge of anonymous sign-ins (POST /signup with neither e-mail nor phone, supabase-js's
// signInAnonymously): a user with no address and is_anonymous set, signed in at once with amr
// "anonymous", when ANONYMOUS_SIGN_INS allows it; a limited number per client address per hour.
// Such a user becomes permanent by adding an e-mail address (PUT /user) once it is confirmed.
import { withService } from '../../db/transactions.js';
import { authError, errors } from '../errors.js';
import { enforceLimits } from '../rate-limit.js';
import { openSession } from '../sessions.js';
import { findUserById } from '../users.js';
import { tokenResponse, type IdentityDeps, type RequestContext, type TokenResponse } from './context.js';

/** GoTrue counts anonymous sign-ins per address per hour (RATE_LIMIT_ANONYMOUS_USERS). */
const ANONYMOUS_WINDOW_SECONDS = 3600;

export const anonymousDisabled = () =>
  authError(422, 'anonymous_provider_disabled', 'Anonymous sign-ins are disabled');

export async function signUpAnonymously(
  deps: IdentityDeps,
  input: { data: Record<string, unknown> },
  context: RequestContext,
): Promise<TokenResponse> {
  const { settings } = deps;
  // GoTrue's order: the provider switch, then the rate limit, then DISABLE_SIGNUP.
  if (!settings.anonymousSignIns) throw anonymousDisabled();
  if (context.ip) {
    await enforceLimits(deps.pool, [
      {
        bucket: `signup:anonymous:${context.ip}`,
        max: settings.rateLimits.anonymousSignInsPerAddress,
        windowSeconds: ANONYMOUS_WINDOW_SECONDS,
      },
    ]);
  }
  if (settings.disableSignup) throw errors.signupDisabled();
  return withService(deps.pool, async (tx) => {
    // No identity and no provider in app_metadata, as GoTrue: the account is nothing but its id.
    const inserted = await tx.query<{ id: string }>(
      `insert into auth.users (is_anonymous, raw_app_meta_data, raw_user_meta_data)
       values (true, '{}'::jsonb, $1::jsonb) returning id`,
      [JSON.stringify(input.data)],
    );
    const userId = inserted.rows[0]!.id;
    const session = await openSession(tx, userId, 'anonymous', context);
    return tokenResponse(deps, (await findUserById(tx, userId))!, session);
  });
}
