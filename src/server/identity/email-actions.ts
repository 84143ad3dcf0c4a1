// In charge of the e-mail actions every identity flow shares (sign-up confirmation, invitation,
// magic link, recovery, e-mail change, reauthentication): which token type, e-mail template and
// frequency slot each uses, issuing its one-time token (with a PKCE flow state when the client
// sent a code challenge), building its /verify link, stamping the user's *_sent_at column, and
// sending the e-mail through the outbox in the caller's transaction.
import type { Tx } from '../db/transactions.js';
import type { AuthMailKind } from './mail-templates.js';
import { claimFrequencySlot, sendAuthMail, type AuthMailSettings, type FrequencyGroup } from './mailer.js';
import {
  clearOneTimeTokens,
  issueOneTimeToken,
  type AccountProposal,
  type OneTimeTokenKey,
  type OneTimeTokenType,
} from './one-time-tokens.js';
import { createFlowState, type FlowAuthenticationMethod, type PkceChallenge } from './pkce.js';

/** GoTrue's link types (admin generate_link's `type`), plus reauthentication (a code only). */
export type EmailActionType =
  | 'signup'
  | 'invite'
  | 'magiclink'
  | 'recovery'
  | 'email_change_current'
  | 'email_change_new'
  | 'reauthentication';

interface ActionSpec {
  tokenType: OneTimeTokenType;
  mailKind: AuthMailKind;
  /** null: no per-address frequency (GoTrue does not limit invitations) */
  group: FrequencyGroup | null;
  /** the `type` of its /verify link; null when the e-mail carries a code only */
  verifyType: string | null;
  /** the session's amr method when its link completes a PKCE flow */
  flowMethod: FlowAuthenticationMethod | null;
  /** the user column GoTrue stamps when it is sent */
  sentAtColumn: string;
}

export const EMAIL_ACTIONS: Record<EmailActionType, ActionSpec> = {
  signup: {
    tokenType: 'confirmation_token',
    mailKind: 'confirmation',
    group: 'confirmation',
    verifyType: 'signup',
    flowMethod: 'email/signup',
    sentAtColumn: 'confirmation_sent_at',
  },
  invite: {
    tokenType: 'confirmation_token',
    mailKind: 'invite',
    group: null,
    verifyType: 'invite',
    flowMethod: 'invite',
    sentAtColumn: 'confirmation_sent_at',
  },
  magiclink: {
    tokenType: 'recovery_token',
    mailKind: 'magic_link',
    group: 'recovery',
    verifyType: 'magiclink',
    flowMethod: 'magiclink',
    sentAtColumn: 'recovery_sent_at',
  },
  recovery: {
    tokenType: 'recovery_token',
    mailKind: 'recovery',
    group: 'recovery',
    verifyType: 'recovery',
    flowMethod: 'recovery',
    sentAtColumn: 'recovery_sent_at',
  },
  email_change_current: {
    tokenType: 'email_change_token_current',
    mailKind: 'email_change',
    group: 'email_change',
    verifyType: 'email_change',
    flowMethod: 'email_change',
    sentAtColumn: 'email_change_sent_at',
  },
  email_change_new: {
    tokenType: 'email_change_token_new',
    mailKind: 'email_change',
    group: 'email_change',
    verifyType: 'email_change',
    flowMethod: 'email_change',
    sentAtColumn: 'email_change_sent_at',
  },
  reauthentication: {
    tokenType: 'reauthentication_token',
    mailKind: 'reauthentication',
    group: 'reauthentication',
    verifyType: null,
    flowMethod: null,
    sentAtColumn: 'reauthentication_sent_at',
  },
};

export interface EmailActionSettings {
  mail: AuthMailSettings;
  tokenKey: OneTimeTokenKey;
  otpLength: number;
  otpExpirySeconds: number;
  /** public identity base URL: links go to `${authUrl}/auth/v1/verify` */
  authUrl: string;
}

export interface EmailActionInput {
  action: EmailActionType;
  userId: string;
  /** where the e-mail goes (the new address for email_change_new) */
  address: string;
  /** an already allowed redirect (redirects.ts chooseRedirect) */
  redirectTo: string;
  /** the client's PKCE challenge: the link then ends in `?code=` for POST /token?grant_type=pkce */
  pkce?: PkceChallenge | null;
  /**
   * what this flow asks for an account whose address nobody proved yet (its sign-up's password
   * and data), kept when this e-mail's link or code proves the address; everything else the
   * account's creator set goes then. Nothing when absent; 'carry' for a resent e-mail.
   */
  proposal?: AccountProposal | 'carry';
}

export interface IssuedEmailAction {
  /** the /verify link (empty for reauthentication) */
  actionLink: string;
  /** the link's token: what verifyOtp takes as token_hash (GoTrue's hashed_token) */
  linkToken: string;
  /** the e-mail code */
  otp: string;
  redirectTo: string;
}

/** GoTrue's e-mail link: `/verify?token=…&type=…&redirect_to=…` on the identity service. */
export function verifyLink(
  authUrl: string,
  linkToken: string,
  verifyType: string,
  redirectTo: string,
): string {
  const query = new URLSearchParams({ token: linkToken, type: verifyType, redirect_to: redirectTo });
  return `${authUrl}/auth/v1/verify?${query}`;
}

/**
 * Issues the action's token (replacing the user's previous one of its type) and stamps the
 * user's *_sent_at column, without sending anything: what admin generate_link needs.
 */
export async function issueEmailAction(
  tx: Tx,
  settings: EmailActionSettings,
  input: EmailActionInput,
): Promise<IssuedEmailAction> {
  const spec = EMAIL_ACTIONS[input.action];
  const flowStateId =
    input.pkce && spec.flowMethod
      ? await createFlowState(tx, {
          userId: input.userId,
          challenge: input.pkce,
          authenticationMethod: spec.flowMethod,
        })
      : null;
  const token = await issueOneTimeToken(tx, settings.tokenKey, {
    userId: input.userId,
    type: spec.tokenType,
    relatesTo: input.address,
    ttlSeconds: settings.otpExpirySeconds,
    otpLength: settings.otpLength,
    flowStateId,
    ...(input.proposal ? { proposal: input.proposal } : {}),
  });
  // The column name comes from the table above, never from a request.
  await tx.query(`update auth.users set ${spec.sentAtColumn} = now(), updated_at = now() where id = $1`, [
    input.userId,
  ]);
  return {
    actionLink: spec.verifyType
      ? verifyLink(settings.authUrl, token.linkToken, spec.verifyType, input.redirectTo)
      : '',
    linkToken: token.linkToken,
    otp: token.otp,
    redirectTo: input.redirectTo,
  };
}

/**
 * The whole e-mail action: the address's frequency slot (429 when too soon), the token, and the
 * e-mail in the outbox, all in `tx`. `variables` adds what the template shows beyond the link
 * and code (Email defaults to the address).
 */
export async function sendEmailAction(
  tx: Tx,
  settings: EmailActionSettings,
  input: EmailActionInput & {
    variables?: { Email?: string; NewEmail?: string; Data?: Record<string, unknown> };
  },
): Promise<IssuedEmailAction> {
  const spec = EMAIL_ACTIONS[input.action];
  if (spec.group) await claimFrequencySlot(tx, settings.mail, spec.group, input.address);
  const issued = await issueEmailAction(tx, settings, input);
  await sendAuthMail(tx, settings.mail, {
    kind: spec.mailKind,
    to: input.address,
    variables: {
      Email: input.address,
      ...input.variables,
      ConfirmationURL: issued.actionLink,
      Token: issued.otp,
      TokenHash: issued.linkToken,
      RedirectTo: issued.redirectTo,
    },
  });
  return issued;
}

/**
 * The e-mail change confirmation(s) for a user whose `email_change` holds the new address: to the
 * new address always, and to the current one too when secure e-mail change is on (GoTrue's
 * default), each with its own link and code. Until both (or the one) are confirmed the current
 * address stays in force.
 */
export async function sendEmailChange(
  tx: Tx,
  settings: EmailActionSettings,
  input: {
    userId: string;
    currentEmail: string | null;
    newEmail: string;
    secure: boolean;
    redirectTo: string;
    pkce?: PkceChallenge | null;
    data?: Record<string, unknown>;
  },
): Promise<{ current: IssuedEmailAction | null; new: IssuedEmailAction }> {
  await tx.query(`update auth.users set email_change_confirm_status = 0, updated_at = now() where id = $1`, [
    input.userId,
  ]);
  const variables = { Email: input.currentEmail ?? '', NewEmail: input.newEmail, Data: input.data ?? {} };
  const common = { userId: input.userId, redirectTo: input.redirectTo, pkce: input.pkce ?? null, variables };
  const current =
    input.secure && input.currentEmail
      ? await sendEmailAction(tx, settings, {
          ...common,
          action: 'email_change_current',
          address: input.currentEmail,
        })
      : null;
  // A confirmation left over from an earlier, secure request must not count for this one.
  if (!current) await clearOneTimeTokens(tx, input.userId, ['email_change_token_current']);
  const next = await sendEmailAction(tx, settings, {
    ...common,
    action: 'email_change_new',
    address: input.newEmail,
  });
  return { current, new: next };
}
