// In charge of delivering the outbox over SMTP: claim a batch under a lease (so several instances
// never send the same message at once), send over pooled connections, mark each sent, and
// retry failures with exponential backoff until a message is given up.
import nodemailer, { type Transporter } from 'nodemailer';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../logger.js';
import { LOGO_CID, LOGO_SRC, logoPng } from './logo.js';
import { materializeMail, type MailBrand } from './materialize.js';
import type { OutboxRow } from './outbox.js';

export interface DeliveryOptions {
  pool: Pool;
  logger: Logger;
  /** an SMTP URL (smtp://user:pass@host:port) or a ready transporter (tests) */
  smtp: string | Transporter;
  from: string;
  /** the product's name and address, for e-mails rendered at delivery (invitations) */
  brand?: MailBrand;
  batchSize?: number;
  maxAttempts?: number;
  /** how long a claimed message is reserved for this worker */
  leaseSeconds?: number;
  /** first retry delay; doubles each attempt, capped at one hour */
  baseBackoffSeconds?: number;
}

export interface DeliveryReport {
  sent: number;
  retried: number;
  failed: number;
}

export class MailDelivery {
  private readonly transport: Transporter;
  private readonly options: Required<Omit<DeliveryOptions, 'smtp'>>;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(options: DeliveryOptions) {
    this.transport =
      typeof options.smtp === 'string'
        ? nodemailer.createTransport(options.smtp, { pool: true, maxConnections: 5 } as object)
        : options.smtp;
    this.options = {
      pool: options.pool,
      logger: options.logger,
      from: options.from,
      brand: options.brand ?? { productName: 'Tenantry', siteUrl: 'http://localhost:3000' },
      batchSize: options.batchSize ?? 50,
      maxAttempts: options.maxAttempts ?? 8,
      leaseSeconds: options.leaseSeconds ?? 120,
      baseBackoffSeconds: options.baseBackoffSeconds ?? 30,
    };
  }

  /** Claims deliverable messages: pending, due, and not leased by a live worker. */
  private async claim(): Promise<OutboxRow[]> {
    const result = await this.options.pool.query<OutboxRow>(
      `update internal.outbox o
       set leased_until = now() + make_interval(secs => $2), attempts = o.attempts + 1
       where o.id in (
         select id from internal.outbox
         where sent_at is null and failed_at is null and available_at <= now()
           and (leased_until is null or leased_until < now())
         order by available_at, id
         limit $1
         for update skip locked)
       returning o.id, o.kind, o.to_address, o.subject, o.text_body, o.html_body, o.headers,
                 o.message_id, o.created_at, o.attempts, o.last_error, o.sent_at, o.failed_at, o.template`,
      [this.options.batchSize, this.options.leaseSeconds],
    );
    return result.rows;
  }

  private async send(message: OutboxRow): Promise<void> {
    const mail = materializeMail(message, this.options.brand);
    // The logo travels with the message (Content-ID) so no client fetches anything to show it;
    // an operator's own HTML that does not name it gets no attachment.
    const logo = mail.html?.includes(LOGO_SRC)
      ? [{ filename: 'logo.png', content: logoPng(), contentType: 'image/png', cid: LOGO_CID }]
      : [];
    await this.transport.sendMail({
      from: this.options.from,
      to: message.to_address,
      subject: mail.subject,
      text: mail.text,
      ...(mail.html ? { html: mail.html, attachments: logo } : {}),
      headers: message.headers,
      messageId: message.message_id,
    });
  }

  /** Delivers one batch. Safe to call from several processes at once. */
  async deliverBatch(): Promise<DeliveryReport> {
    const batch = await this.claim();
    const report: DeliveryReport = { sent: 0, retried: 0, failed: 0 };
    await Promise.all(
      batch.map(async (message) => {
        try {
          await this.send(message);
        } catch (error) {
          const giveUp = message.attempts >= this.options.maxAttempts;
          const delay = Math.min(3600, this.options.baseBackoffSeconds * 2 ** (message.attempts - 1));
          await this.options.pool.query(
            `update internal.outbox set leased_until = null, last_error = $2,
               available_at = now() + make_interval(secs => $3),
               failed_at = case when $4 then now() end
             where id = $1`,
            [message.id, String((error as Error).message).slice(0, 1000), delay, giveUp],
          );
          this.options.logger.warn(
            { outboxId: message.id, attempts: message.attempts, giveUp, err: error },
            'mail delivery failed',
          );
          if (giveUp) report.failed++;
          else report.retried++;
          return;
        }
        await this.options.pool.query(
          `update internal.outbox set sent_at = now(), leased_until = null, last_error = null where id = $1`,
          [message.id],
        );
        report.sent++;
      }),
    );
    return report;
  }

  /** Delivers until nothing is due (or a batch makes no progress). */
  async drain(): Promise<DeliveryReport> {
    const total: DeliveryReport = { sent: 0, retried: 0, failed: 0 };
    for (;;) {
      const report = await this.deliverBatch();
      total.sent += report.sent;
      total.retried += report.retried;
      total.failed += report.failed;
      if (report.sent + report.retried + report.failed === 0 || report.sent === 0) return total;
    }
  }

  /** Polls the outbox every `intervalMs` until stop(). */
  start(intervalMs = 2000): void {
    const tick = () => {
      if (this.stopped) return;
      this.running = this.drain()
        .catch((error: unknown) => this.options.logger.error({ err: error }, 'mail delivery loop failed'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, intervalMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  /** Stops polling, waits for the batch in flight, and closes SMTP connections. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    this.transport.close();
  }
}
