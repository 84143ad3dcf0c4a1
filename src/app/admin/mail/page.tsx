// Operator console → Mail: the outbox by state (queued, sent, failed), a failed message put back
// in the queue with one click.
import Link from 'next/link';
import { PageHeader } from '@/app/components/page-header';
import { hrefWith, Pager } from '@/app/components/pager';
import { RelativeTime } from '@/app/components/relative-time';
import { Badge } from '@/app/components/ui/badge';
import { Card, CardContent } from '@/app/components/ui/card';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { retryMailAction } from '@/app/actions/operator';
import { requireOperator } from '@/app/lib/operator';
import { pageRequest } from '@/app/lib/paging';
import { outbox, type MailState } from '@/app/lib/queries/operator';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Mail · Console' };

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

const STATES: { value: MailState; label: string }[] = [
  { value: 'all', label: 'All' },
  { value: 'queued', label: 'Queued' },
  { value: 'sent', label: 'Sent' },
  { value: 'failed', label: 'Failed' },
];
const BADGE = { queued: 'warning', sent: 'success', failed: 'danger' } as const;

export default async function MailPage({ searchParams }: Props) {
  await requireOperator('/admin/mail');
  const query = await searchParams;
  const state = STATES.find((s) => s.value === query.state)?.value ?? 'all';
  const result = await outbox(pageRequest(query), state);
  return (
    <>
      <PageHeader title="Mail" description="Messages waiting, delivered and given up on." />
      <nav aria-label="Message state" className="mb-4 flex flex-wrap gap-1">
        {STATES.map((s) => (
          <Link
            key={s.value}
            href={hrefWith('/admin/mail', {}, { state: s.value === 'all' ? null : s.value })}
            aria-current={s.value === state ? 'page' : undefined}
            className="inline-flex h-11 items-center rounded-md px-3 text-sm font-medium text-muted-foreground hover:bg-accent aria-[current=page]:bg-muted aria-[current=page]:text-foreground sm:h-9"
          >
            {s.label}
          </Link>
        ))}
      </nav>
      <Card>
        <CardContent className="pt-6">
          {result.items.length === 0 ? (
            <p className="text-sm text-muted-foreground">No messages.</p>
          ) : (
            <ul className="divide-y text-sm" aria-label="Messages">
              {result.items.map((m) => (
                <li
                  key={m.id}
                  className="flex flex-col gap-2 py-3 sm:flex-row sm:items-center sm:gap-4"
                  data-mail={m.id}
                >
                  <div className="min-w-0 flex-1">
                    <span className="block truncate font-medium">{m.subject}</span>
                    <span className="block text-xs break-all text-muted-foreground">
                      {m.kind} to {m.to} · <RelativeTime date={m.createdAt} /> · {m.attempts} attempts
                    </span>
                    {m.lastError ? (
                      <span className="block text-xs break-words text-danger-text">{m.lastError}</span>
                    ) : null}
                  </div>
                  <Badge variant={BADGE[m.state]}>{m.state}</Badge>
                  {m.state === 'failed' ? (
                    <form action={retryMailAction}>
                      <input type="hidden" name="outbox_id" value={m.id} />
                      <SubmitButton variant="outline" size="sm" pendingText="Queuing…">
                        Try again
                      </SubmitButton>
                    </form>
                  ) : null}
                </li>
              ))}
            </ul>
          )}
          <Pager
            label="Messages"
            result={result}
            href={(n) => hrefWith('/admin/mail', query, { page: n })}
            className="mt-4"
          />
        </CardContent>
      </Card>
    </>
  );
}
