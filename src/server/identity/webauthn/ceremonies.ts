// In charge of the WebAuthn ceremonies as the identity service runs them (through
// @simplewebauthn/server): the options a browser needs to create or use a credential, the
// credential responses' shapes as they arrive in request bodies, and their verification against
// the relying party (RP id and origins from configuration) and a stored challenge.
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { z } from 'zod';

export interface RelyingParty {
  id: string;
  name: string;
  origins: string[];
  /** seconds a ceremony's challenge can be answered */
  challengeExpirySeconds: number;
}

/** EdDSA, ES256, RS256: what authenticators in use sign with, fixed so options do not vary by Node version. */
const ALGORITHMS = [-8, -7, -257];

/** A stored credential, as verifying an assertion needs it. */
export interface StoredCredential {
  /** base64url of the credential id */
  id: string;
  publicKey: Uint8Array;
  signCount: number;
  transports: string[];
}

/** A credential a registration produced, for storing. */
export interface NewCredential extends StoredCredential {
  credentialId: Buffer;
  aaguid: string | null;
  attestationType: string;
  backupEligible: boolean;
  backedUp: boolean;
}

/** GoTrue's user handle: the user's id as text (its UTF-8 bytes), so an assertion's handle reads back as the id. */
export function userHandleOf(userId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(userId, 'utf8'));
}

/** The user id an assertion's user handle (base64url) names, or null. */
export function userIdOfHandle(handle: string | undefined): string | null {
  if (!handle) return null;
  const text = Buffer.from(handle, 'base64url').toString('utf8');
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text)
    ? text.toLowerCase()
    : null;
}

const base64url = z
  .string()
  .max(16_384)
  .regex(/^[A-Za-z0-9_-]*={0,2}$/, 'must be base64url');
const transports = z.array(z.string().max(32)).max(16).optional();
const clientExtensionResults = z.record(z.string(), z.unknown()).default({});

/** navigator.credentials.create()'s result as auth-js and @simplewebauthn/browser serialise it. */
export const registrationResponse = z.object({
  id: base64url.min(1),
  rawId: base64url.min(1),
  type: z.literal('public-key'),
  response: z.object({
    clientDataJSON: base64url.min(1),
    attestationObject: base64url.min(1),
    transports,
  }),
  clientExtensionResults,
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).nullish(),
});

/** navigator.credentials.get()'s result, serialised the same way. */
export const authenticationResponse = z.object({
  id: base64url.min(1),
  rawId: base64url.min(1),
  type: z.literal('public-key'),
  response: z.object({
    clientDataJSON: base64url.min(1),
    authenticatorData: base64url.min(1),
    signature: base64url.min(1),
    userHandle: base64url.nullish(),
  }),
  clientExtensionResults,
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).nullish(),
});

export type RegistrationResponse = z.infer<typeof registrationResponse>;
export type AuthenticationResponse = z.infer<typeof authenticationResponse>;

export interface RegistrationOptionsInput {
  userId: string;
  userName: string;
  displayName: string;
  /** credentials the user already has, so an authenticator is not registered twice */
  exclude: { id: string; transports: string[] }[];
  /** a passkey is discoverable (the sign-in names no account); a second factor need not be */
  discoverable: boolean;
}

export function registrationOptions(
  rp: RelyingParty,
  input: RegistrationOptionsInput,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userID: userHandleOf(input.userId),
    userName: input.userName,
    userDisplayName: input.displayName,
    timeout: rp.challengeExpirySeconds * 1000,
    attestationType: 'none',
    excludeCredentials: input.exclude.map((c) => ({ id: c.id, transports: c.transports })),
    authenticatorSelection: input.discoverable
      ? { residentKey: 'required', requireResidentKey: true, userVerification: 'preferred' }
      : { residentKey: 'discouraged', userVerification: 'preferred' },
    supportedAlgorithmIDs: ALGORITHMS,
  });
}

/** Options for an assertion: any discoverable credential when `allow` is empty (passkey sign-in). */
export function authenticationOptions(
  rp: RelyingParty,
  allow: { id: string; transports: string[] }[],
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: rp.id,
    timeout: rp.challengeExpirySeconds * 1000,
    userVerification: 'preferred',
    allowCredentials: allow.map((c) => ({ id: c.id, transports: c.transports as AuthenticatorTransport[] })),
  });
}

/**
 * The credential a registration response creates, or null when it does not verify: wrong
 * challenge, origin, RP id or type, no user presence, an unsupported key or attestation.
 */
export async function verifyRegistration(
  rp: RelyingParty,
  response: RegistrationResponse,
  expectedChallenge: string,
): Promise<NewCredential | null> {
  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response: response as RegistrationResponseJSON,
      expectedChallenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      requireUserVerification: false,
      supportedAlgorithmIDs: ALGORITHMS,
    });
  } catch {
    return null;
  }
  if (!verified.verified) return null;
  const info = verified.registrationInfo;
  const aaguid = info.aaguid && info.aaguid !== '00000000-0000-0000-0000-000000000000' ? info.aaguid : null;
  return {
    id: info.credential.id,
    credentialId: Buffer.from(info.credential.id, 'base64url'),
    publicKey: info.credential.publicKey,
    signCount: info.credential.counter,
    transports: info.credential.transports ?? response.response.transports ?? [],
    aaguid,
    attestationType: info.fmt,
    backupEligible: info.credentialDeviceType === 'multiDevice',
    backedUp: info.credentialBackedUp,
  };
}

/**
 * The credential's new signature count when an assertion verifies, else null: wrong challenge,
 * origin, RP id or signature, or a counter that did not move forward (a cloned authenticator).
 */
export async function verifyAssertion(
  rp: RelyingParty,
  response: AuthenticationResponse,
  expectedChallenge: string,
  credential: StoredCredential,
): Promise<number | null> {
  try {
    const verified = await verifyAuthenticationResponse({
      response: response as AuthenticationResponseJSON,
      expectedChallenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      credential: {
        id: credential.id,
        publicKey: new Uint8Array(credential.publicKey),
        counter: credential.signCount,
        transports: credential.transports as AuthenticatorTransport[],
      },
      requireUserVerification: false,
    });
    return verified.verified ? verified.authenticationInfo.newCounter : null;
  } catch {
    return null;
  }
}
