// In charge of refusing a production start that would fail silently later: mail that would never
// leave the outbox while users are told "we sent you a link", links built on a placeholder
// address, paid plans without the payment provider's key. Each gap is named with the variable
// that closes it. Local mode needs none of them (its development mailbox shows the mail).
import type { Config } from './config.js';

export class ProductionGapError extends Error {
  override name = 'ProductionGapError';
}

/** What production lacks, one sentence per gap; empty when nothing does or in local mode. */
export function productionGaps(config: Config): string[] {
  if (config.mode !== 'production') return [];
  const gaps: string[] = [];
  if (config.mailDelivery === undefined) {
    gaps.push(
      'SMTP_URL is not set: sign-up confirmations, password resets, invitations and digests would ' +
        'never be sent while users are told they were. Set SMTP_URL (smtp:// or smtps://), or set ' +
        'MAIL_DELIVERY=outbox if another process sends the mail from the outbox',
    );
  } else if (config.mailDelivery === 'smtp' && !config.smtpUrl) {
    gaps.push('MAIL_DELIVERY=smtp needs SMTP_URL (smtp:// or smtps://)');
  }
  if (!config.appUrlGiven) {
    gaps.push(
      `APP_URL is not set: links in e-mails and payment return pages would point at ${config.appUrl}. ` +
        'Set APP_URL to the address users reach the app at (https://app.example.com)',
    );
  }
  if (config.billingPlans.length > 0 && !config.stripeSecretKey) {
    gaps.push(
      'BILLING_PLANS names paid plans but STRIPE_SECRET_KEY is not set: checkout would fail for every ' +
        'customer. Set STRIPE_SECRET_KEY, or remove BILLING_PLANS to run without billing',
    );
  }
  return gaps;
}

/** Throws one error naming every gap, so an operator fixes them in one go. */
export function assertProductionReady(config: Config): void {
  const gaps = productionGaps(config);
  if (gaps.length === 0) return;
  throw new ProductionGapError(
    `production mode (DATABASE_URL is set) is missing what it needs to work:\n${gaps.map((g) => `  - ${g}`).join('\n')}`,
  );
}
