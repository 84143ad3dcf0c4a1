// Test support: identity e-mails as a user gets them. The outbox is delivered by the real
// delivery worker to the real test SMTP server, and the received MIME message is decoded
// (multipart, quoted-printable, base64) into subject, text and HTML, with the /verify link and the
// code picked out.
import { createLogger } from '../../src/server/logger.js';
import { MailDelivery } from '../../src/server/mail/delivery.js';
import type { Pool } from '../../src/server/db/pool.js';
import { afterAll, beforeAll, expect } from 'vitest';
import { startTestServer, type TestServer } from './server.js';
import { startTestSmtp, type ReceivedMail, type TestSmtp } from './smtp.js';

export interface AuthMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** the /verify link of the text part, if any */
  link: string | null;
  /** the e-mail code of the text part, if any */
  code: string | null;
}

function decodeQuotedPrintable(body: string): string {
  const bytes = body
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

function splitHead(raw: string): { head: string; body: string } {
  const at = raw.search(/\r?\n\r?\n/);
  if (at === -1) return { head: raw, body: '' };
  const sep = raw.slice(at).match(/^\r?\n\r?\n/)![0];
  return { head: raw.slice(0, at), body: raw.slice(at + sep.length) };
}

function headerIn(head: string, name: string): string | undefined {
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ');
  const line = unfolded.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}

function decodePart(head: string, body: string): string {
  const encoding = (headerIn(head, 'content-transfer-encoding') ?? '7bit').toLowerCase();
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body);
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

/** The text/plain and text/html parts of a raw MIME message. */
export function decodeMessage(raw: string): { subject: string; text: string; html: string } {
  const { head, body } = splitHead(raw);
  const parts: Record<string, string> = {};
  const visit = (partHead: string, partBody: string) => {
    const type = headerIn(partHead, 'content-type') ?? 'text/plain';
    const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
    if (boundary && type.toLowerCase().startsWith('multipart/')) {
      for (const chunk of partBody.split(`--${boundary}`).slice(1)) {
        if (chunk.startsWith('--')) break;
        const inner = splitHead(chunk.replace(/^\r?\n/, ''));
        visit(inner.head, inner.body);
      }
      return;
    }
    const kind = type.toLowerCase().startsWith('text/html') ? 'html' : 'text';
    parts[kind] ??= decodePart(partHead, partBody).replace(/\r?\n$/, '');
  };
  visit(head, body);
  return { subject: headerIn(head, 'subject') ?? '', text: parts.text ?? '', html: parts.html ?? '' };
}

export interface AuthMailbox {
  smtp: TestSmtp;
  /** delivers the outbox, then returns every identity e-mail received for `to`, oldest first */
  mailsTo(to: string): Promise<AuthMail[]>;
  /** the newest identity e-mail for `to` (fails the test when there is none) */
  latest(to: string): Promise<AuthMail>;
  close(): Promise<void>;
}

function toAuthMail(message: ReceivedMail): AuthMail {
  const { subject, text, html } = decodeMessage(message.raw);
  return {
    to: message.to[0] ?? '',
    subject,
    text,
    html,
    link: /https?:\/\/\S+\/auth\/v1\/verify\?\S+/.exec(text)?.[0] ?? null,
    code: /code: (\d{6,10})/.exec(text)?.[1] ?? /^(\d{6,10})$/m.exec(text)?.[1] ?? null,
  };
}

/** A real SMTP server plus the delivery worker over `pool`'s outbox. */
export async function startAuthMailbox(pool: Pool): Promise<AuthMailbox> {
  const smtp = await startTestSmtp();
  const delivery = new MailDelivery({
    pool,
    logger: createLogger('silent'),
    smtp: smtp.url,
    from: 'Tenantry <no-reply@example.com>',
  });
  const mailsTo = async (to: string) => {
    await delivery.drain();
    // Messages of one batch arrive in any order; the outbox's order is the order they were written.
    const { rows } = await pool.query<{ message_id: string }>(
      'select message_id from internal.outbox where to_address = $1 order by id',
      [to.toLowerCase()],
    );
    const order = rows.map((r) => r.message_id);
    return smtp.messages
      .filter((m) => m.to.includes(to.toLowerCase()))
      .sort(
        (a, b) => order.indexOf(a.header('message-id') ?? '') - order.indexOf(b.header('message-id') ?? ''),
      )
      .map(toAuthMail);
  };
  return {
    smtp,
    mailsTo,
    latest: async (to) => {
      const mails = await mailsTo(to);
      const last = mails.at(-1);
      if (!last) throw new Error(`no e-mail for ${to}`);
      return last;
    },
    close: async () => {
      await delivery.stop();
      await smtp.close();
    },
  };
}

/**
 * Follows an e-mailed /auth/v1/verify link on the test server (links carry AUTH_URL, which a test
 * cannot know in advance) and returns where its 303 sends the browser.
 */
export async function followVerifyLink(server: TestServer, link: string): Promise<URL> {
  const url = new URL(link);
  const res = await fetch(`${server.url}${url.pathname}${url.search}`, { redirect: 'manual' });
  expect(res.status).toBe(303);
  return new URL(res.headers.get('location')!);
}

/** Lets every address be sent another e-mail now, as if the one-a-minute wait were over. */
export function allowAnotherEmail(server: TestServer) {
  return server.pool.query(`update internal.mail_frequency set sent_at = now() - interval '61 seconds'`);
}

/**
 * For a test file about e-mail flows: a test server that requires confirmation, with SITE_URL
 * https://app.example.com and the e-mail rate limit out of the way (`env` adds or overrides), and
 * a mailbox receiving its e-mails; started before the file's tests and stopped after them.
 * `started` receives both once they run.
 */
export function serveWithMailbox(
  env: Record<string, string>,
  started: (server: TestServer, mailbox: AuthMailbox) => void,
): void {
  let server: TestServer | undefined;
  let mailbox: AuthMailbox | undefined;
  beforeAll(async () => {
    server = await startTestServer({
      AUTH_AUTOCONFIRM: 'false',
      SITE_URL: 'https://app.example.com',
      RATE_LIMIT_EMAIL_SENT: '1000',
      ...env,
    });
    mailbox = await startAuthMailbox(server.pool);
    started(server, mailbox);
  });
  afterAll(async () => {
    await mailbox?.close();
    await server?.close();
  });
}
