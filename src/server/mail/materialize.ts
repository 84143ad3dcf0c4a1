// In charge of a message's final bodies: most are rendered when they are written, but an e-mail
// the database writes (the workspace invitation, the notices about requests to join) carries its
// facts instead, and is rendered here, in the product's layout, when it is delivered or shown in
// the development mailbox.
import { renderInvitationMail, type InvitationFacts, type MailBrand } from './invitation-mail.js';
import { readNoticeFacts, renderNoticeMail } from './notice-mail.js';
import type { OutboxRow } from './outbox.js';

export type { MailBrand } from './invitation-mail.js';

export interface MaterializedMail {
  subject: string;
  text: string;
  html: string | null;
}

export function materializeMail(
  row: Pick<OutboxRow, 'kind' | 'subject' | 'text_body' | 'html_body' | 'template'>,
  brand: MailBrand,
): MaterializedMail {
  if (row.kind === 'invitation' && row.template && row.html_body === null) {
    const rendered = renderInvitationMail(row.template as unknown as InvitationFacts, brand);
    return { subject: row.subject, text: rendered.text, html: rendered.html };
  }
  const notice = row.html_body === null ? readNoticeFacts(row.template) : null;
  if (notice) {
    const rendered = renderNoticeMail(notice, brand);
    return { subject: row.subject, text: rendered.text, html: rendered.html };
  }
  return { subject: row.subject, text: row.text_body, html: row.html_body };
}
