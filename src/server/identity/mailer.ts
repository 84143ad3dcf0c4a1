// In charge of sending the identity e-mails: GoTrue's per-address frequency (SMTP_MAX_FREQUENCY,
// the same answer whether or not the address has an account), its hourly limit on e-mails sent
// (RATE_LIMIT_EMAIL_SENT), and writing the rendered message to the transactional outbox in the
// caller's transaction, so the token and its e-mail commit together or not at all.
import { createHash } from 'node:crypto';
import type { Queryable } from '../db/pool.js';
import { enqueueMail } from '../mail/outbox.js';
import { errors } from './errors.js';
import {
  describeDuration,
  renderAuthMail,
  type AuthMailKind,
  type AuthMailTemplates,
  type TemplateVariables,
} from './mail-templates.js';
import { enforceLimits } from './rate-limit.js';

export interface AuthMailSettings {
  productName: string;
  siteUrl: string;
  templates: AuthMailTemplates;
  /** seconds between two e-mails of one kind to one address (SMTP_MAX_FREQUENCY) */
  maxFrequencySeconds: number;
  /** e-mails per hour, all addresses together (RATE_LIMIT_EMAIL_SENT) */
  emailSentPerHour: number;
  /** GoTrue counts e-mails against the hourly limit only when sign-ups need confirming */
  countEmailsSent: boolean;
  /** lifetime of links and codes, for the e-mail's words */
  otpExpirySeconds: number;
}

/**
 * Kinds of e-mail that share one frequency slot per address, as GoTrue shares its *_sent_at
 * columns: a magic link and a recovery e-mail share the recovery slot.
 */
export type FrequencyGroup = 'confirmation' | 'recovery' | 'email_change' | 'reauthentication';

function slotKey(group: FrequencyGroup, address: string): Buffer {
  return createHash('sha256').update(`${group}:${address.trim().toLowerCase()}`, 'utf8').digest();
}

/**
 * Claims the right to e-mail `address` for `group` now; throws GoTrue's 429
 * over_email_send_rate_limit ("... after N seconds.") when the last one was too recent. Call it
 * for unknown addresses too, so a repeated request is answered alike either way.
 */
export async function claimFrequencySlot(
  db: Queryable,
  settings: AuthMailSettings,
  group: FrequencyGroup,
  address: string,
): Promise<void> {
  if (settings.maxFrequencySeconds <= 0) return;
  const result = await db.query<{ wait: number }>('select internal.claim_mail_slot($1, $2) as wait', [
    slotKey(group, address),
    settings.maxFrequencySeconds,
  ]);
  const wait = result.rows[0]?.wait ?? 0;
  if (wait > 0) throw errors.emailFrequency(wait);
  // Slots older than a day say nothing; prune them now and then.
  if (Math.random() < 0.01) {
    await db.query(`delete from internal.mail_frequency where sent_at < now() - interval '1 day'`);
  }
}

/** Counts one e-mail against the hourly limit; 429 "email rate limit exceeded" beyond it. */
async function countEmailSent(db: Queryable, settings: AuthMailSettings): Promise<void> {
  if (!settings.countEmailsSent) return;
  await enforceLimits(
    db,
    [{ bucket: 'auth:email-sent', max: settings.emailSentPerHour, windowSeconds: 3600 }],
    errors.emailRateLimit,
  );
}

/**
 * Everything sending would cost (the frequency slot, the hourly count) without sending: for a
 * request about an unknown or already confirmed address, so its answer is the one a real
 * e-mail would have got.
 */
export async function chargeAsIfSent(
  db: Queryable,
  settings: AuthMailSettings,
  group: FrequencyGroup,
  address: string,
): Promise<void> {
  await claimFrequencySlot(db, settings, group, address);
  await countEmailSent(db, settings);
}

export interface AuthMail {
  kind: AuthMailKind;
  to: string;
  /** everything but ProductName, SiteURL and ValidFor, which come from the settings */
  variables: Omit<TemplateVariables, 'ProductName' | 'SiteURL' | 'ValidFor'>;
}

/**
 * Counts the e-mail against the hourly limit (429 "email rate limit exceeded" beyond it), renders
 * it and writes it to the outbox in `tx`.
 */
export async function sendAuthMail(tx: Queryable, settings: AuthMailSettings, mail: AuthMail): Promise<void> {
  await countEmailSent(tx, settings);
  const rendered = renderAuthMail(settings.templates, mail.kind, {
    ...mail.variables,
    ProductName: settings.productName,
    SiteURL: settings.siteUrl,
    ValidFor: describeDuration(settings.otpExpirySeconds),
  });
  await enqueueMail(tx, {
    kind: `auth.${mail.kind}`,
    to: mail.to,
    subject: rendered.subject,
    text: rendered.text,
    html: rendered.html,
  });
}
