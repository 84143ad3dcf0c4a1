// In charge of writing e-mails to the transactional outbox (internal.outbox). Callers pass the
// transaction of the change that causes the e-mail, so both commit or neither does.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/pool.js';

export interface OutgoingMail {
  kind: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
  headers?: Record<string, string>;
  /** a second message with the same key is silently dropped (exactly-once per key) */
  dedupeKey?: string;
}

export interface OutboxRow {
  id: string;
  kind: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string | null;
  headers: Record<string, string>;
  message_id: string;
  created_at: Date;
  attempts: number;
  last_error: string | null;
  sent_at: Date | null;
  failed_at: Date | null;
  /** the facts of a message rendered when read (materialize.ts), or null */
  template: Record<string, unknown> | null;
}

/** Enqueues one message; returns its id, or null when the dedupe key was already used. */
export async function enqueueMail(
  db: Queryable,
  mail: OutgoingMail,
  messageDomain = 'tenantry.local',
): Promise<string | null> {
  const result = await db.query<{ id: string }>(
    `insert into internal.outbox (kind, dedupe_key, to_address, subject, text_body, html_body, headers, message_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8)
     on conflict (dedupe_key) do nothing
     returning id`,
    [
      mail.kind,
      mail.dedupeKey ?? null,
      mail.to,
      mail.subject,
      mail.text,
      mail.html ?? null,
      JSON.stringify(mail.headers ?? {}),
      `<${randomUUID()}@${messageDomain}>`,
    ],
  );
  return result.rows[0]?.id ?? null;
}

/** The newest messages, for the development mailbox. */
export async function recentMail(db: Queryable, limit = 50): Promise<OutboxRow[]> {
  const result = await db.query<OutboxRow>(
    `select id, kind, to_address, subject, text_body, html_body, headers, message_id, created_at,
            attempts, last_error, sent_at, failed_at, template
     from internal.outbox order by id desc limit $1`,
    [limit],
  );
  return result.rows;
}
