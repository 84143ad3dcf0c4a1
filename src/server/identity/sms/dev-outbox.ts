// In charge of the development outbox for text messages: in local mode without a provider, a
// message is written to internal.sms_outbox (in the caller's transaction, like the e-mail outbox)
// and the development mailbox page shows it. Production never uses it (config.ts refuses it there).
import type { Queryable } from '../../db/pool.js';
import type { SmsSender } from './provider.js';

export function createDevOutbox(): SmsSender {
  return {
    name: 'outbox',
    channels: ['sms', 'whatsapp'],
    async send(db, message) {
      const result = await db.query<{ id: string }>(
        'insert into internal.sms_outbox (phone, channel, body) values ($1, $2, $3) returning id',
        [message.phone, message.channel, message.body],
      );
      return `outbox-${result.rows[0]!.id}`;
    },
  };
}

export interface OutboxSms {
  id: string;
  phone: string;
  channel: string;
  body: string;
  createdAt: Date;
}

/** The newest messages first, for the development mailbox page. */
export async function listDevSms(db: Queryable, limit = 50): Promise<OutboxSms[]> {
  const result = await db.query<{
    id: string;
    phone: string;
    channel: string;
    body: string;
    created_at: Date;
  }>('select id, phone, channel, body, created_at from internal.sms_outbox order by id desc limit $1', [
    limit,
  ]);
  return result.rows.map((r) => ({
    id: r.id,
    phone: r.phone,
    channel: r.channel,
    body: r.body,
    createdAt: r.created_at,
  }));
}
