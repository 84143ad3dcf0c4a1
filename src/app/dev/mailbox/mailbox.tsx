// The development mailbox's content: every e-mail the service has written to its outbox, newest
// first, with links made clickable so invitation and unsubscribe links can be followed without a
// mail server. Who may see it is decided by the page (access.ts).
import type { Pool } from '@/server/db/pool';
import { recentMail } from '@/server/mail/outbox';

function Linkified({ text }: { text: string }) {
  const parts = text.split(/(https?:\/\/[^\s<>"]+)/g);
  return (
    <pre style={{ whiteSpace: 'pre-wrap', margin: 0 }}>
      {parts.map((part, i) =>
        /^https?:\/\//.test(part) ? (
          <a key={i} href={part}>
            {part}
          </a>
        ) : (
          part
        ),
      )}
    </pre>
  );
}

export async function Mailbox({ pool, smtpConfigured }: { pool: Pool; smtpConfigured: boolean }) {
  const messages = await recentMail(pool, 50);
  return (
    <>
      <h1>Development mailbox</h1>
      <p className="muted">
        {smtpConfigured
          ? 'SMTP is configured: these messages are also delivered.'
          : 'No SMTP_URL is set, so e-mails stay here instead of being sent.'}{' '}
        The newest {messages.length} messages of the outbox.
      </p>
      {messages.length === 0 ? <p>No e-mails yet.</p> : null}
      {messages.map((m) => (
        <article key={m.id} className="card" aria-labelledby={`mail-${m.id}`}>
          <h2 id={`mail-${m.id}`} style={{ fontSize: '1.1rem', margin: '0 0 0.25rem' }}>
            {m.subject}
          </h2>
          <p className="muted" style={{ margin: '0 0 0.75rem' }}>
            To {m.to_address} · {m.kind} ·{' '}
            {new Date(m.created_at).toISOString().replace('T', ' ').slice(0, 19)} UTC
            {m.sent_at ? ' · sent' : m.failed_at ? ' · failed' : ' · waiting'}
          </p>
          <Linkified text={m.text_body} />
        </article>
      ))}
    </>
  );
}
