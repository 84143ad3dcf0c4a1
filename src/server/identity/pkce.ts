// In charge of PKCE (RFC 7636) for e-mail links, as GoTrue does it: validating a client's
// code_challenge, keeping the flow state (auth.flow_state), issuing its authorization code when
// the link is followed, and exchanging code + verifier for the user once (POST
// /token?grant_type=pkce). The code is stored as its SHA-256; the verifier check is constant-time
// (docs/decisions/0016). A linking flow keeps the provider identity it will join to the user
// until the exchange, so only the verifier's holder links it (docs/decisions/0041).
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Tx } from '../db/transactions.js';
import { authError, errors } from './errors.js';

export type CodeChallengeMethod = 's256' | 'plain';

/** GoTrue's authentication methods for PKCE flows; the exchange's session carries it as amr. */
export type FlowAuthenticationMethod =
  'email/signup' | 'recovery' | 'magiclink' | 'invite' | 'email_change' | 'oauth';

export interface PkceChallenge {
  codeChallenge: string;
  method: CodeChallengeMethod;
}

/** How long an issued code may wait for its exchange (GoTrue's flow state expiry, 5 minutes). */
export const AUTH_CODE_TTL_SECONDS = 300;

const CHALLENGE_PATTERN = /^[a-zA-Z._~0-9-]+$/;

/**
 * The PKCE parameters of a request, checked as GoTrue checks them: both or neither (null), a
 * challenge of 43 to 128 unreserved characters, method s256 or plain (any case).
 */
export function parsePkceParams(
  codeChallenge: string | null | undefined,
  method: string | null | undefined,
): PkceChallenge | null {
  const challenge = codeChallenge ?? '';
  const rawMethod = method ?? '';
  if ((challenge === '') !== (rawMethod === '')) {
    throw errors.validation('PKCE flow requires code_challenge_method and code_challenge');
  }
  if (challenge === '') return null;
  if (challenge.length < 43 || challenge.length > 128) {
    throw errors.validation('code challenge has to be between 43 and 128 characters');
  }
  if (!CHALLENGE_PATTERN.test(challenge)) {
    throw errors.validation(
      'code challenge can only contain alphanumeric characters, hyphens, periods, underscores and tildes',
    );
  }
  const normalized = rawMethod.toLowerCase();
  if (normalized !== 's256' && normalized !== 'plain') {
    throw errors.validation(`unsupported code_challenge method "${rawMethod}": use s256 or plain`);
  }
  return { codeChallenge: challenge, method: normalized };
}

/** Whether `verifier` answers `challenge`: S256 is BASE64URL(SHA256(verifier)). Constant-time. */
export function verifierMatches(challenge: PkceChallenge, verifier: string): boolean {
  const derived =
    challenge.method === 's256'
      ? createHash('sha256').update(verifier, 'ascii').digest('base64url')
      : verifier;
  // Equal-length digests of both sides, so the comparison time says nothing about either.
  const a = createHash('sha256').update(derived, 'utf8').digest();
  const b = createHash('sha256').update(challenge.codeChallenge, 'utf8').digest();
  return timingSafeEqual(a, b) && derived.length === challenge.codeChallenge.length;
}

function hashAuthCode(code: string): Buffer {
  return createHash('sha256').update(code, 'utf8').digest();
}

/** A provider identity waiting for its linking flow's code exchange. */
export interface PendingIdentity {
  provider: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  identityData: Record<string, unknown>;
}

/** Starts a PKCE flow for `userId`; the returned id goes on the one-time token whose link completes it. */
export async function createFlowState(
  tx: Tx,
  input: {
    userId: string;
    challenge: PkceChallenge;
    authenticationMethod: FlowAuthenticationMethod;
    /** for a linking flow: the identity its exchange joins to the user */
    pendingIdentity?: PendingIdentity | null;
  },
): Promise<string> {
  const result = await tx.query<{ id: string }>(
    `insert into auth.flow_state (user_id, code_challenge, code_challenge_method, authentication_method,
       pending_identity)
     values ($1, $2, $3, $4, $5) returning id`,
    [
      input.userId,
      input.challenge.codeChallenge,
      input.challenge.method,
      input.authenticationMethod,
      input.pendingIdentity ? JSON.stringify(input.pendingIdentity) : null,
    ],
  );
  // Flows never completed are useless after a day; prune them now and then.
  if (Math.random() < 0.02) {
    await tx.query(`delete from auth.flow_state where created_at < now() - interval '1 day'`);
  }
  return result.rows[0]!.id;
}

/** Issues the flow's authorization code (a UUID, as GoTrue's); null when the flow is gone. */
export async function issueAuthCode(tx: Tx, flowStateId: string): Promise<string | null> {
  const code = randomUUID();
  const result = await tx.query(
    `update auth.flow_state set auth_code_hash = $2, auth_code_issued_at = now(), updated_at = now()
     where id = $1`,
    [flowStateId, hashAuthCode(code)],
  );
  return (result.rowCount ?? 0) > 0 ? code : null;
}

/** Removes a flow state (its link was used without PKCE, so no code will be asked for). */
export async function deleteFlowState(tx: Tx, flowStateId: string): Promise<void> {
  await tx.query('delete from auth.flow_state where id = $1', [flowStateId]);
}

/** What a link's code stands for, told to the browser that opened it without the verifier. */
export interface StrandedCode {
  userId: string;
  email: string | null;
  authenticationMethod: FlowAuthenticationMethod;
}

/**
 * A code that came back to a browser without its verifier (the link was opened elsewhere): what
 * its flow was for and whose it is, so the app can say what happened and offer the next step.
 * Reading it changes nothing: the code stays exchangeable by the browser that holds the verifier
 * (for its few minutes), which is the one that asked. Null when no unexpired code matches.
 */
export async function strandedCode(tx: Tx, authCode: string): Promise<StrandedCode | null> {
  const found = await tx.query<{
    id: string;
    user_id: string;
    email: string | null;
    method: FlowAuthenticationMethod;
  }>(
    `select f.id, f.user_id, u.email, f.authentication_method as method
     from auth.flow_state f join auth.users u on u.id = f.user_id
     where f.auth_code_hash = $1 and f.auth_code_issued_at >= now() - make_interval(secs => $2)`,
    [hashAuthCode(authCode), AUTH_CODE_TTL_SECONDS],
  );
  const flow = found.rows[0];
  if (!flow) return null;
  return { userId: flow.user_id, email: flow.email, authenticationMethod: flow.method };
}

export const pkceErrors = {
  notFound: () => authError(404, 'flow_state_not_found', 'invalid flow state, no valid flow state found'),
  expired: () => authError(422, 'flow_state_expired', 'invalid flow state, flow state has expired'),
  badVerifier: () =>
    authError(400, 'bad_code_verifier', 'code challenge does not match previously saved code verifier'),
};

interface FlowRow {
  id: string;
  user_id: string;
  code_challenge: string;
  code_challenge_method: CodeChallengeMethod;
  authentication_method: FlowAuthenticationMethod;
  pending_identity: PendingIdentity | null;
  expired: boolean;
}

/**
 * The exchange: finds the flow by its code (locked, so two exchanges of one code serialise and
 * the second finds nothing), checks its age and the verifier, and deletes it. Throws GoTrue's
 * flow_state_not_found (404), flow_state_expired (422) or bad_code_verifier (400). A wrong
 * verifier leaves the flow in place: the code is a random UUID, guessing verifiers for it is hopeless.
 */
export async function exchangeAuthCode(
  tx: Tx,
  authCode: string,
  codeVerifier: string,
): Promise<{
  userId: string;
  authenticationMethod: FlowAuthenticationMethod;
  pendingIdentity: PendingIdentity | null;
}> {
  const result = await tx.query<FlowRow>(
    `select id, user_id, code_challenge, code_challenge_method, authentication_method, pending_identity,
            auth_code_issued_at < now() - make_interval(secs => $2) as expired
     from auth.flow_state where auth_code_hash = $1
     for update`,
    [hashAuthCode(authCode), AUTH_CODE_TTL_SECONDS],
  );
  const flow = result.rows[0];
  if (!flow) throw pkceErrors.notFound();
  if (flow.expired) throw pkceErrors.expired();
  const challenge = { codeChallenge: flow.code_challenge, method: flow.code_challenge_method };
  if (!verifierMatches(challenge, codeVerifier)) throw pkceErrors.badVerifier();
  await deleteFlowState(tx, flow.id);
  return {
    userId: flow.user_id,
    authenticationMethod: flow.authentication_method,
    pendingIdentity: flow.pending_identity,
  };
}
