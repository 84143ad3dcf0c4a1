// In charge of POST /signup: a new e-mail account, signed in at once with autoconfirm, otherwise
// waiting for its confirmation; an already registered address is never revealed.
import { withService } from '../../db/transactions.js';
import { errors } from '../errors.js';
import { hashPassword } from '../passwords.js';
import { enforceLimits } from '../rate-limit.js';
import { openSession } from '../sessions.js';
import { insertUser, normalizeEmail, renderUser } from '../users.js';
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
  const passwordHash = await hashPassword(input.password);
  return withService(deps.pool, async (tx) => {
    const user = await insertUser(tx, {
      email: input.email,
      passwordHash,
      confirmed: settings.autoconfirm,
      userMetadata: input.data ?? {},
    });
    if (!user) {
      if (settings.autoconfirm) throw errors.userAlreadyExists();
      // Without autoconfirm GoTrue answers with an obfuscated user so sign-up does not reveal
      // who is registered; clients recognise it by the empty identities list.
      return obfuscatedUser(input.email);
    }
    if (!settings.autoconfirm) return renderUser(user);
    const session = await openSession(tx, user.id, 'password', context);
    return tokenResponse(deps, user, session);
  });
}

function obfuscatedUser(email: string): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    id: crypto.randomUUID(),
    aud: 'authenticated',
    role: 'authenticated',
    email: normalizeEmail(email),
    phone: '',
    confirmation_sent_at: now,
    app_metadata: { provider: 'email', providers: ['email'] },
    user_metadata: {},
    identities: [],
    created_at: now,
    updated_at: now,
    is_anonymous: false,
  };
}
