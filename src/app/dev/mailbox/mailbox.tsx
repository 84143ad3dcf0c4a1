// The development mailbox's content: every e-mail the service has written to its outbox, newest
// first, its HTML part previewed as a mail client shows it (a sandboxed frame: no scripts, no
// forms, no navigation of this page) beside its text part, whose links are clickable so
// invitation and unsubscribe links can be followed without a mail server. Who may see it is
// decided by the page (access.ts).
import type { Pool } from '@/server/db/pool';
import { LOGO_SRC, logoDataUrl } from '@/server/mail/logo';
import { materializeMail, type MailBrand } from '@/server/mail/materialize';
import { recentMail } from '@/server/mail/outbox';
import { count } from '@/server/text/counts';
import { PageHeader } from '@/app/components/page-header';
import { Badge } from '@/app/components/ui/badge';

function Linkified({ text }: { text: string }) {
  const parts = text.split(/(https?:\/\/[^\s<>"]+)/g);
  // Long links wrap anywhere, so the page never scrolls sideways on a phone.
  return (
    <pre className="m-0 font-sans text-sm break-words whitespace-pre-wrap [overflow-wrap:anywhere]">
      {parts.map((part, i) =>
        /^https?:\/\//.test(part) ? (
          <a key={i} href={part} className="text-primary underline">
            {part}
          </a>
        ) : (
          part
        ),
      )}
    </pre>
  );
}

function HtmlPreview({ id, subject, html }: { id: string; subject: string; html: string }) {
  // The logo is an attachment named by Content-ID in a real message; here the same bytes inline.
  const document = html.split(LOGO_SRC).join(logoDataUrl());
  return (
    <iframe
      id={`mail-${id}-html`}
      title={`HTML part of “${subject}”`}
      sandbox=""
      srcDoc={document}
      className="h-[36rem] w-full min-w-0 rounded-md border bg-white"
    />
  );
}

export async function Mailbox({
  pool,
  smtpConfigured,
  brand,
}: {
  pool: Pool;
  smtpConfigured: boolean;
  brand: MailBrand;
}) {
  const messages = (await recentMail(pool, 50)).map((m) => ({ ...m, ...materializeMail(m, brand) }));
  return (
    <>
      <PageHeader
        title="Development mailbox"
        description={
          <>
            {smtpConfigured
              ? 'SMTP is configured: these messages are also delivered.'
              : 'No SMTP_URL is set, so e-mails stay here instead of being sent.'}{' '}
            {messages.length === 0
              ? 'The outbox is empty.'
              : messages.length === 1
                ? 'The one message of the outbox.'
                : `The newest ${count(messages.length, 'message')} of the outbox.`}
          </>
        }
      />
      {messages.length === 0 ? (
        <div className="rounded-lg border border-dashed bg-card px-6 py-10 text-center text-sm text-muted-foreground">
          No e-mails yet. Invitations and digests appear here.
        </div>
      ) : null}
      <div className="grid grid-cols-1 gap-4">
        {messages.map((m) => (
          <article
            key={m.id}
            className="min-w-0 rounded-lg border bg-card p-5 shadow-xs"
            aria-labelledby={`mail-${m.id}`}
          >
            <h2 id={`mail-${m.id}`} className="text-base font-semibold break-words">
              {m.subject}
            </h2>
            <p className="mt-1 mb-4 flex flex-wrap items-center gap-x-2 gap-y-1 text-xs text-muted-foreground">
              <span className="break-all">To {m.to_address}</span>
              <span aria-hidden="true">·</span>
              <span>{m.kind}</span>
              <span aria-hidden="true">·</span>
              <span>{new Date(m.created_at).toISOString().replace('T', ' ').slice(0, 19)} UTC</span>
              <Badge variant={m.sent_at ? 'success' : m.failed_at ? 'danger' : 'default'}>
                {m.sent_at ? 'sent' : m.failed_at ? 'failed' : 'waiting'}
              </Badge>
            </p>
            <div className={m.html ? 'grid grid-cols-1 gap-4 lg:grid-cols-2' : undefined}>
              {m.html ? (
                <section aria-label="HTML part" className="min-w-0">
                  <h3 className="mb-2 text-xs font-medium text-muted-foreground">HTML</h3>
                  <HtmlPreview id={m.id} subject={m.subject} html={m.html} />
                </section>
              ) : null}
              <section aria-label="Text part" className="min-w-0">
                {m.html ? <h3 className="mb-2 text-xs font-medium text-muted-foreground">Text</h3> : null}
                <Linkified text={m.text} />
              </section>
            </div>
          </article>
        ))}
      </div>
    </>
  );
}
