// The development mailbox: in local mode (no DATABASE_URL), and only for a browser on this
// machine, the outbox's e-mails (mailbox.tsx) and text messages (text-messages.tsx). Anywhere
// else, and in production, this page does not exist.
import { notFound } from 'next/navigation';
import { connectedClient } from '@/app/lib/client';
import { mailboxAllowed } from '@/app/dev/mailbox/access';
import { Mailbox } from '@/app/dev/mailbox/mailbox';
import { TextMessages } from '@/app/dev/mailbox/text-messages';
import { getRuntime } from '@/server/runtime';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Development mailbox' };

export default async function MailboxPage() {
  const { config, pool } = getRuntime();
  if (config.mode !== 'local') notFound();
  if (!mailboxAllowed(config.mode, await connectedClient())) notFound();
  return (
    <>
      <Mailbox
        pool={pool}
        smtpConfigured={Boolean(config.smtpUrl)}
        brand={{ productName: config.authEmail.productName, siteUrl: config.appUrl }}
      />
      {config.authSms.provider.kind === 'outbox' ? <TextMessages pool={pool} /> : null}
    </>
  );
}
