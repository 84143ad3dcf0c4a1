// In charge of phone sign-up, phone sign-in codes and resent phone codes (POST /signup, /otp and
// /resend with a phone), as GoTrue's Signup, SmsOtp and Resend serve them. A sign-up is confirmed
// by its SMS code unless SMS_AUTOCONFIRM; /otp sends a code that signs in (creating the account
// when create_user allows); answers never tell whether a number has an account: a confirmed
// number's sign-up gets GoTrue's obfuscated user, and /otp and /resend answer `{}` alike.
import { withService } from '../../db/transactions.js';
import { errors } from '../errors.js';
import { hashCallers } from '../hash-queue.js';
import { findUserByPhone, insertPhoneUser } from '../phone-accounts.js';
import { enforceLimits } from '../rate-limit.js';
import { openSession } from '../sessions.js';
import { claimSmsSlot, phoneErrors, sendPhoneCode } from '../sms/phone-codes.js';
import type { SmsChannel } from '../sms/provider.js';
import { findUserById, renderUser, type UserWithIdentities } from '../users.js';
import {
  checkPasswordStrength,
  tokenResponse,
  type IdentityDeps,
  type RequestContext,
  type TokenResponse,
} from './context.js';

export interface PhoneSignUpInput {
  /** normalised: E.164 digits without the + */
  phone: string;
  password: string;
  data: Record<string, unknown>;
  channel: SmsChannel;
}

async function signUpBudget(deps: IdentityDeps, context: RequestContext): Promise<void> {
  if (!context.ip) return;
  await enforceLimits(deps.pool, [
    {
      bucket: `signup:ip:${context.ip}`,
      max: deps.settings.rateLimits.signUpPerAddress,
      windowSeconds: deps.settings.rateLimits.windowSeconds,
    },
  ]);
}

export async function signUpWithPhone(
  deps: IdentityDeps,
  input: PhoneSignUpInput,
  context: RequestContext,
): Promise<TokenResponse | Record<string, unknown>> {
  const { settings, phone: sms } = deps;
  if (!sms.sender) throw phoneErrors.signupsDisabled();
  if (settings.disableSignup) throw errors.signupDisabled();
  checkPasswordStrength(settings, input.password);
  await signUpBudget(deps, context);
  const passwordHash = await deps.passwords.hash(hashCallers.address(context.ip), input.password);
  return withService(deps.pool, async (tx) => {
    const created = await insertPhoneUser(tx, {
      phone: input.phone,
      passwordHash,
      confirmed: sms.autoconfirm,
      userMetadata: input.data,
    });
    if (created && sms.autoconfirm) {
      const session = await openSession(tx, created.id, 'password', context);
      return tokenResponse(deps, { ...created, last_sign_in_at: new Date() }, session);
    }
    let user: UserWithIdentities | null = created;
    if (!user) {
      if (sms.autoconfirm) throw errors.userAlreadyExists();
      user = await findUserByPhone(tx, input.phone);
      if (!user || user.phone_confirmed_at) {
        // A confirmed number is not revealed: the frequency slot a real code would take, and a
        // made-up user, as GoTrue's sanitizeUser answers.
        await claimSmsSlot(tx, sms, 'confirmation', input.phone);
        return obfuscatedPhoneUser(input.phone, input.data);
      }
    }
    await sendPhoneCode(tx, sms, {
      kind: 'confirmation',
      userId: user.id,
      phone: input.phone,
      channel: input.channel,
      ip: context.ip,
      proposal: { passwordHash, userMetadata: input.data },
    });
    return renderUser((await findUserById(tx, user.id))!);
  });
}

export interface PhoneOtpInput {
  phone: string;
  createUser: boolean;
  data: Record<string, unknown>;
  channel: SmsChannel;
}

/**
 * POST /otp with a phone: a code by SMS that signs in (verify type sms). An unknown number becomes
 * an account when create_user allows; with create_user false it costs what a code would and
 * gets nothing (GoTrue answers 422 otp_disabled there, which tells who has an account).
 */
export async function signInWithPhoneOtp(
  deps: IdentityDeps,
  input: PhoneOtpInput,
  context: RequestContext,
): Promise<Record<string, never>> {
  const { settings, phone: sms } = deps;
  if (!sms.sender) throw phoneErrors.loginsDisabled();
  await signUpBudget(deps, context);
  await withService(deps.pool, async (tx) => {
    let user = await findUserByPhone(tx, input.phone);
    if (!user && !input.createUser) {
      await claimSmsSlot(tx, sms, 'confirmation', input.phone);
      return;
    }
    if (!user) {
      if (settings.disableSignup) throw errors.signupDisabled();
      // No password: the account signs in by code until its owner sets one.
      user = await insertPhoneUser(tx, {
        phone: input.phone,
        passwordHash: null,
        confirmed: sms.autoconfirm,
        userMetadata: input.data,
      });
      if (!user) throw phoneErrors.phoneExists();
    }
    await sendPhoneCode(tx, sms, {
      kind: 'confirmation',
      userId: user.id,
      phone: input.phone,
      channel: input.channel,
      ip: context.ip,
      // A sign-in code sets no password: an unproven account it proves is left with none.
      ...(user.phone_confirmed_at ? {} : { proposal: { passwordHash: null, userMetadata: input.data } }),
    });
  });
  return {};
}

/** POST /resend for sms (an unconfirmed sign-up's code) or phone_change (the new number's code). */
export async function resendPhoneCode(
  deps: IdentityDeps,
  input: { type: 'sms' | 'phone_change'; phone: string },
  context: RequestContext,
): Promise<Record<string, never>> {
  const sms = deps.phone;
  if (!sms.sender) throw phoneErrors.loginsDisabled();
  await withService(deps.pool, async (tx) => {
    if (input.type === 'sms') {
      const user = await findUserByPhone(tx, input.phone);
      if (!user || user.phone_confirmed_at) {
        await claimSmsSlot(tx, sms, 'confirmation', input.phone);
        return;
      }
      await sendPhoneCode(tx, sms, {
        kind: 'confirmation',
        userId: user.id,
        phone: input.phone,
        channel: 'sms',
        ip: context.ip,
        proposal: 'carry',
      });
      return;
    }
    const found = await tx.query<{ id: string }>(
      'select id from auth.users where phone_change = $1 order by phone_change_sent_at desc nulls last limit 1 for update',
      [input.phone],
    );
    const userId = found.rows[0]?.id;
    // No change is pending to the number: GoTrue answers at once, uncharged. That a number someone
    // is moving to answers 429 within the minute tells only that, never who has an account.
    if (!userId) return;
    await sendPhoneCode(tx, sms, {
      kind: 'phone_change',
      userId,
      phone: input.phone,
      channel: 'sms',
      ip: context.ip,
    });
  });
  return {};
}

/** GoTrue's sanitizeUser for a phone sign-up: nothing real in it but what the caller sent. */
function obfuscatedPhoneUser(phone: string, data: Record<string, unknown>): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    id: crypto.randomUUID(),
    aud: 'authenticated',
    role: '',
    email: '',
    phone,
    confirmation_sent_at: now,
    app_metadata: { provider: 'phone', providers: ['phone'] },
    user_metadata: data,
    identities: [],
    created_at: now,
    updated_at: now,
    is_anonymous: false,
  };
}
