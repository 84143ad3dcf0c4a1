// In charge of the one-time tokens e-mailed for confirmation, recovery, magic links, e-mail change
// and reauthentication (auth.one_time_tokens): issuing one (the link token and the e-mail code,
// replacing the user's previous token of that type, with what its flow asked for the account)
// and consuming one, once, by link or by code.
// Neither value is stored: the link token as its SHA-256, the code as an HMAC under a server key,
// compared in constant time, with failed attempts counted (docs/decisions/0015).
import {
  createHash,
  createHmac,
  hkdfSync,
  randomBytes,
  randomInt,
  randomUUID,
  timingSafeEqual,
} from 'node:crypto';
import type { Queryable } from '../db/pool.js';
import type { Tx } from '../db/transactions.js';

/** GoTrue's token types (models/one_time_token.go). */
export type OneTimeTokenType =
  | 'confirmation_token'
  | 'reauthentication_token'
  | 'recovery_token'
  | 'email_change_token_new'
  | 'email_change_token_current'
  | 'phone_change_token';

/** The prefix GoTrue puts on tokens issued for a PKCE flow, so a failed link still answers PKCE-style. */
export const PKCE_PREFIX = 'pkce_';

export interface OneTimeTokenKey {
  otpKey: Buffer;
}

export function createOneTimeTokenKey(jwtSecret: string): OneTimeTokenKey {
  return { otpKey: Buffer.from(hkdfSync('sha256', jwtSecret, 'tenantry', 'one-time-token-otp', 32)) };
}

/**
 * What the flow that sends a token asked for the account: the password and profile data an
 * unconfirmed account takes when this token proves its address (migration 0047).
 */
export interface AccountProposal {
  passwordHash: string | null;
  userMetadata: Record<string, unknown> | null;
}

export const NO_PROPOSAL: AccountProposal = { passwordHash: null, userMetadata: null };

export interface IssueOptions {
  userId: string;
  type: OneTimeTokenType;
  /** the address the token is sent to */
  relatesTo: string;
  /** lifetime in seconds (MAILER_OTP_EXP) */
  ttlSeconds: number;
  /** digits of the e-mail code (MAILER_OTP_LENGTH) */
  otpLength: number;
  /** the PKCE flow this token's link completes, if any */
  flowStateId?: string | null;
  /**
   * what this flow asks for the account (nothing when absent); 'carry' keeps what the token it
   * replaces asked for (a resent e-mail continues the flow that first sent it)
   */
  proposal?: AccountProposal | 'carry';
  /** a fixed code instead of a random one (a test number's SMS_TEST_OTP) */
  otp?: string;
}

export interface IssuedToken {
  id: string;
  /** the value of the link (`token` in /verify links, `token_hash` for verifyOtp) */
  linkToken: string;
  /** the e-mail code (`token` with `email` for verifyOtp) */
  otp: string;
  expiresAt: Date;
}

export interface ConsumedToken {
  id: string;
  userId: string;
  type: OneTimeTokenType;
  relatesTo: string;
  flowStateId: string | null;
  createdAt: Date;
  proposal: AccountProposal;
}

interface TokenRow {
  id: string;
  user_id: string;
  token_type: OneTimeTokenType;
  relates_to: string;
  flow_state_id: string | null;
  created_at: Date;
  otp_hash: Buffer;
  password_hash: string | null;
  user_metadata: Record<string, unknown> | null;
}

const ROW_COLUMNS = `id, user_id, token_type, relates_to, flow_state_id, created_at, otp_hash, password_hash,
  user_metadata`;

function hashLinkToken(linkToken: string): Buffer {
  return createHash('sha256').update(linkToken, 'utf8').digest();
}

// Bound to the token's id, so equal codes of two tokens never share a hash.
function hashOtp(key: OneTimeTokenKey, tokenId: string, otp: string): Buffer {
  return createHmac('sha256', key.otpKey).update(`${tokenId}:${otp}`, 'utf8').digest();
}

/** A uniformly random code of `length` digits, leading zeros kept. */
export function generateOtp(length: number): string {
  let otp = '';
  while (otp.length < length) otp += String(randomInt(0, 10));
  return otp;
}

/** 56 hex characters like GoTrue's token hashes, but random: nothing about it derives from the code. */
function generateLinkToken(pkce: boolean): string {
  const value = randomBytes(28).toString('hex');
  return pkce ? `${PKCE_PREFIX}${value}` : value;
}

function toConsumed(row: TokenRow): ConsumedToken {
  return {
    id: row.id,
    userId: row.user_id,
    type: row.token_type,
    relatesTo: row.relates_to,
    flowStateId: row.flow_state_id,
    createdAt: row.created_at,
    proposal: { passwordHash: row.password_hash, userMetadata: row.user_metadata },
  };
}

/** Issues a token, replacing the user's previous token of the same type (only the latest works). */
export async function issueOneTimeToken(
  tx: Tx,
  key: OneTimeTokenKey,
  options: IssueOptions,
): Promise<IssuedToken> {
  const id = randomUUID();
  const linkToken = generateLinkToken(Boolean(options.flowStateId));
  const otp = options.otp ?? generateOtp(options.otpLength);
  const carry = options.proposal === 'carry';
  const proposal = options.proposal && options.proposal !== 'carry' ? options.proposal : NO_PROPOSAL;
  const result = await tx.query<{ expires_at: Date }>(
    `insert into auth.one_time_tokens as t
       (id, user_id, token_type, token_hash, otp_hash, relates_to, flow_state_id, expires_at,
        password_hash, user_metadata)
     values ($1, $2, $3, $4, $5, lower($6), $7, now() + make_interval(secs => $8), $9, $10)
     on conflict (user_id, token_type) do update set
       id = excluded.id, token_hash = excluded.token_hash, otp_hash = excluded.otp_hash,
       relates_to = excluded.relates_to, flow_state_id = excluded.flow_state_id,
       failed_attempts = 0, expires_at = excluded.expires_at, created_at = now(),
       password_hash = case when $11 then t.password_hash else excluded.password_hash end,
       user_metadata = case when $11 then t.user_metadata else excluded.user_metadata end
     returning t.expires_at`,
    [
      id,
      options.userId,
      options.type,
      hashLinkToken(linkToken),
      hashOtp(key, id, otp),
      options.relatesTo,
      options.flowStateId ?? null,
      options.ttlSeconds,
      proposal.passwordHash,
      proposal.userMetadata === null ? null : JSON.stringify(proposal.userMetadata),
      carry,
    ],
  );
  // Expired tokens are useless; prune them now and then rather than on every issue.
  if (Math.random() < 0.02) {
    await tx.query(`delete from auth.one_time_tokens where expires_at < now() - interval '1 day'`);
  }
  return { id, linkToken, otp, expiresAt: result.rows[0]!.expires_at };
}

/**
 * Consumes the live token whose link value is `linkToken` and whose type is one of `types`:
 * deleted in the same statement, so a second use finds nothing. Null when there is no such live
 * token (unknown, tampered, reused, expired or of another type). A token issued for a PKCE flow
 * is consumed only when `pkceFlows` says the caller ends in the flow's code exchange; otherwise
 * it is left as it is and `{ pkce: true }` says why nothing was consumed.
 */
export async function consumeByLinkToken(
  tx: Tx,
  linkToken: string,
  types: readonly OneTimeTokenType[],
  options: { pkceFlows: boolean },
): Promise<ConsumedToken | { pkce: true } | null> {
  const hash = hashLinkToken(linkToken);
  const result = await tx.query<TokenRow>(
    `delete from auth.one_time_tokens
     where token_hash = $1 and token_type = any($2::text[]) and expires_at > now()
       and ($3 or flow_state_id is null)
     returning ${ROW_COLUMNS}`,
    [hash, [...types], options.pkceFlows],
  );
  const row = result.rows[0];
  if (row) return toConsumed(row);
  if (options.pkceFlows) return null;
  const pkce = await tx.query(
    `select 1 from auth.one_time_tokens
     where token_hash = $1 and token_type = any($2::text[]) and expires_at > now()
       and flow_state_id is not null`,
    [hash, [...types]],
  );
  return pkce.rowCount ? { pkce: true } : null;
}

export type OtpOutcome =
  /** the code matched a live token, now consumed */
  | { kind: 'verified'; token: ConsumedToken }
  /** live tokens exist for the address but the code matched none; their failures were counted */
  | { kind: 'wrong' }
  /** no live token with attempts left for the address */
  | { kind: 'none' };

/**
 * Consumes the live token sent to `address`, of one of `types`, whose code is `otp`. Every
 * candidate's code is compared in constant time, all of them (no early exit); a miss counts a
 * failed attempt on each candidate, and a token whose code failed `maxAttempts` times no longer
 * accepts codes. The caller commits the counted failures before refusing.
 */
export async function consumeByOtp(
  tx: Tx,
  key: OneTimeTokenKey,
  options: { address: string; types: readonly OneTimeTokenType[]; otp: string; maxAttempts: number },
): Promise<OtpOutcome> {
  const candidates = await tx.query<TokenRow>(
    `select ${ROW_COLUMNS}
     from auth.one_time_tokens
     where relates_to = lower($1) and token_type = any($2::text[]) and expires_at > now()
       and failed_attempts < $3
     order by created_at desc, id
     for update`,
    [options.address, [...options.types], options.maxAttempts],
  );
  if (candidates.rows.length === 0) return { kind: 'none' };
  let match: TokenRow | undefined;
  for (const row of candidates.rows) {
    const expected = hashOtp(key, row.id, options.otp);
    if (timingSafeEqual(expected, row.otp_hash) && !match) match = row;
  }
  if (!match) {
    await tx.query(
      'update auth.one_time_tokens set failed_attempts = failed_attempts + 1 where id = any($1::uuid[])',
      [candidates.rows.map((r) => r.id)],
    );
    return { kind: 'wrong' };
  }
  await tx.query('delete from auth.one_time_tokens where id = $1', [match.id]);
  return { kind: 'verified', token: toConsumed(match) };
}

/** Removes a user's tokens of the given types (all types when none are given). */
export async function clearOneTimeTokens(
  db: Queryable,
  userId: string,
  types?: readonly OneTimeTokenType[],
): Promise<void> {
  if (types) {
    await db.query('delete from auth.one_time_tokens where user_id = $1 and token_type = any($2::text[])', [
      userId,
      [...types],
    ]);
  } else {
    await db.query('delete from auth.one_time_tokens where user_id = $1', [userId]);
  }
}
