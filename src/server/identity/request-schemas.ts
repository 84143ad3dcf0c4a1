// In charge of the shapes of /auth/v1 request bodies (zod), checked once at the edge. GoTrue's
// wording where clients show it (an invalid e-mail, a missing token).
import { z } from 'zod';

export const email = z
  .string({ error: 'must be a string' })
  .trim()
  .pipe(z.email({ error: 'Unable to validate email address: invalid format' }));
export const password = z.string({ error: 'must be a string' }).max(1024, 'is too long');
export const metadata = z.record(z.string(), z.unknown());

export const refreshGrantBody = z.object({
  refresh_token: z.string({ error: 'missing refresh_token' }).min(1, 'missing refresh_token'),
});
// auth-js sends null for the PKCE fields of an implicit-flow client.
const optionalText = z.string({ error: 'must be a string' }).nullish();

/** email or phone: the password grant's two spellings (GoTrue's PasswordGrantParams). */
export const passwordGrantBody = z.object({
  email: optionalText,
  phone: optionalText,
  password: z.string({ error: 'missing password' }),
});
/** POST /signup with a phone (and no e-mail). */
export const phoneSignUpBody = z.object({
  phone: z.string({ error: 'must be a string' }),
  password,
  channel: optionalText,
  data: metadata.nullish(),
});

export const signUpBody = z.object({
  email,
  password,
  data: metadata.nullish(),
  code_challenge: optionalText,
  code_challenge_method: optionalText,
});
/** What decides the kind of sign-up: GoTrue signs in anonymously when both are absent or empty. */
export const signUpTarget = z.object({ email: optionalText, phone: optionalText });
export const anonymousSignUpBody = z.object({ data: metadata.nullish() });
export const pkceGrantBody = z.object({
  auth_code: optionalText,
  code_verifier: optionalText,
});
// An ID token is a few kilobytes at most; the bound only keeps a runaway body out of the verifier.
const tokenText = z.string().max(16_384, 'must be at most 16384 characters').nullish();
export const idTokenGrantBody = z.object({
  provider: z.string().max(2048, 'provider must be at most 2048 characters').nullish(),
  id_token: tokenText,
  access_token: tokenText,
  nonce: z.string().max(1024, 'nonce must be at most 1024 characters').nullish(),
  client_id: z.string().max(1024, 'client_id must be at most 1024 characters').nullish(),
  issuer: z.string().max(2048, 'issuer must be at most 2048 characters').nullish(),
  link_identity: z.boolean().nullish(),
});
export const verifyBody = z.object({
  type: optionalText,
  token: optionalText,
  token_hash: optionalText,
  email: optionalText,
  phone: optionalText,
  redirect_to: optionalText,
});
export const resendBody = z.object({
  type: optionalText,
  email: optionalText,
  phone: optionalText,
  code_challenge: optionalText,
  code_challenge_method: optionalText,
});
export const recoverBody = z.object({
  email: optionalText,
  code_challenge: optionalText,
  code_challenge_method: optionalText,
});
export const otpBody = z.object({
  email: optionalText,
  phone: optionalText,
  channel: optionalText,
  data: metadata.nullish(),
  create_user: z.boolean({ error: 'create_user must be true or false' }).nullish(),
  code_challenge: optionalText,
  code_challenge_method: optionalText,
});
/** POST /magiclink: the e-mail half of /otp; anything else in the body is ignored, as GoTrue does. */
export const magicLinkBody = otpBody.pick({
  email: true,
  data: true,
  code_challenge: true,
  code_challenge_method: true,
});
export const updateUserBody = z.object({
  email: email.optional(),
  password: password.optional(),
  current_password: password.nullish(),
  nonce: optionalText,
  data: metadata.optional(),
  phone: z.string({ error: 'must be a string' }).optional(),
  channel: optionalText,
  app_metadata: z.unknown().optional(),
  code_challenge: optionalText,
  code_challenge_method: optionalText,
});
/** "none" or a Go duration; read by durations.ts, which names what it refuses. */
export const banDuration = z.string().max(100);
export const adminCreateBody = z.object({
  /** GoTrue lets the service role choose the id (moving users over with their references) */
  id: z.string().max(100).optional(),
  email,
  password: password.optional(),
  /** an existing argon2 hash instead of a password (moving users over) */
  password_hash: z.string().max(1024).optional(),
  email_confirm: z.boolean().optional(),
  user_metadata: metadata.optional(),
  app_metadata: metadata.optional(),
  ban_duration: banDuration.optional(),
});
export const adminUpdateBody = z.object({
  email: email.optional(),
  password: password.optional(),
  email_confirm: z.boolean().optional(),
  user_metadata: metadata.optional(),
  app_metadata: metadata.optional(),
  ban_duration: banDuration.optional(),
});
// supabase-js sends {should_soft_delete} with every deletion; an empty body means a hard one.
export const adminDeleteBody = z
  .object({ should_soft_delete: z.boolean().optional() })
  .optional()
  .transform((body) => body?.should_soft_delete ?? false);
export const inviteBody = z.object({ email, data: metadata.nullish() });
export const GENERATE_LINK_TYPES = [
  'signup',
  'invite',
  'magiclink',
  'recovery',
  'email_change_current',
  'email_change_new',
] as const;
export const generateLinkBody = z.object({
  type: optionalText,
  email,
  new_email: optionalText,
  password: password.nullish(),
  data: metadata.nullish(),
  redirect_to: optionalText,
});
export const uuid = z.uuid({ error: 'user id must be a UUID' });

// TOTP factors (GoTrue's EnrollFactorParams, ChallengeFactorParams, VerifyFactorParams).
export const enrollFactorBody = z.object({
  factor_type: z.string().max(32).nullish(),
  friendly_name: z.string().max(100, 'friendly_name must be at most 100 characters').nullish(),
  issuer: z.string().max(100, 'issuer must be at most 100 characters').nullish(),
  phone: z.string().max(32, 'phone must be at most 32 characters').nullish(),
});
// auth-js sends a WebAuthn factor's rpId and rpOrigins with the challenge; the server's own
// relying party (WEBAUTHN_RP_*) decides, as GoTrue's does, so they are read and not used.
export const challengeFactorBody = z
  .object({ channel: z.string().max(16).nullish(), webauthn: z.record(z.string(), z.unknown()).nullish() })
  .nullish();
export const verifyFactorBody = z.object({
  challenge_id: z.uuid({ error: 'challenge_id must be a UUID' }),
  code: z.string().max(64, 'code must be at most 64 characters').nullish(),
  webauthn: z
    .object({
      type: z.string().max(16).nullish(),
      credential_response: z.unknown().optional(),
    })
    .nullish(),
});
/** POST /passkeys/registration/verify and /passkeys/authentication/verify; the credential is checked by its ceremony. */
export const passkeyCeremonyBody = z.object({
  challenge_id: z.string({ error: 'challenge_id is required' }).min(1, 'challenge_id is required'),
  credential: z.unknown().optional(),
});
export const passkeyUpdateBody = z.object({
  friendly_name: z.string({ error: 'friendly_name must be a string' }).nullish(),
});
export const factorId = z.uuid({ error: 'factor_id must be an UUID' });
