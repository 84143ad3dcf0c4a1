// The development mailbox's text messages: in local mode without an SMS provider, the phone codes
// the service would have texted (internal.sms_outbox), newest first, so phone sign-in and phone
// factors can be tried without a provider. Who may see it is decided by the page (access.ts).
import type { Pool } from '@/server/db/pool';
import { listDevSms } from '@/server/identity/sms/dev-outbox';

export async function TextMessages({ pool }: { pool: Pool }) {
  const messages = await listDevSms(pool, 50);
  return (
    <section aria-labelledby="text-messages" className="mt-8">
      <h2 id="text-messages" className="mb-3 text-lg font-semibold">
        Text messages
      </h2>
      {messages.length === 0 ? (
        <div className="rounded-lg border border-dashed bg-card px-6 py-6 text-center text-sm text-muted-foreground">
          No text messages yet. Phone sign-in codes appear here.
        </div>
      ) : (
        <ul className="grid grid-cols-1 gap-3">
          {messages.map((m) => (
            <li key={m.id} className="min-w-0 rounded-lg border bg-card p-4 shadow-xs">
              <p className="mb-1 flex flex-wrap gap-x-2 text-xs text-muted-foreground">
                <span>To +{m.phone}</span>
                <span aria-hidden="true">·</span>
                <span>{m.channel}</span>
                <span aria-hidden="true">·</span>
                <span>{new Date(m.createdAt).toISOString().replace('T', ' ').slice(0, 19)} UTC</span>
              </p>
              <p className="text-sm break-words" data-sms-body>
                {m.body}
              </p>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
