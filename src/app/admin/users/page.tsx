// Operator console → Users: every account, newest first, searched by e-mail, phone or id, a page at
// a time; workspace API keys' principals are left out unless asked for, and labelled when shown.
import Link from 'next/link';
import { PageHeader } from '@/app/components/page-header';
import { hrefWith, Pager } from '@/app/components/pager';
import { RelativeTime } from '@/app/components/relative-time';
import { SearchForm } from '@/app/components/search-form';
import { Badge } from '@/app/components/ui/badge';
import { Card, CardContent } from '@/app/components/ui/card';
import { requireOperator } from '@/app/lib/operator';
import { pageRequest } from '@/app/lib/paging';
import { searchAccounts, type AccountKind } from '@/app/lib/queries/operator';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Users · Console' };

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

const KINDS: { value: AccountKind; label: string }[] = [
  { value: 'people', label: 'People' },
  { value: 'keys', label: 'API keys' },
  { value: 'all', label: 'All' },
];

export default async function UsersPage({ searchParams }: Props) {
  await requireOperator('/admin/users');
  const query = await searchParams;
  const kind = KINDS.find((k) => k.value === query.kind)?.value ?? 'people';
  const asked = pageRequest(query);
  const result = await searchAccounts(asked, kind);
  return (
    <>
      <PageHeader title="Users" description="Every account on this installation." />
      <div className="mb-4 flex flex-col gap-3 sm:flex-row sm:items-center">
        <SearchForm
          id="user-search"
          path="/admin/users"
          name="q"
          value={asked.q}
          label="Search accounts by e-mail, phone or id"
          placeholder="e-mail, phone or id"
          keep={kind === 'people' ? {} : { kind }}
          clearHref={hrefWith('/admin/users', query, { q: null, page: null })}
        />
        <nav aria-label="Kind of account" className="flex gap-1">
          {KINDS.map((k) => (
            <Link
              key={k.value}
              href={hrefWith('/admin/users', query, {
                kind: k.value === 'people' ? null : k.value,
                page: null,
              })}
              aria-current={k.value === kind ? 'page' : undefined}
              className="inline-flex h-11 items-center rounded-md px-3 text-sm font-medium text-muted-foreground hover:bg-accent aria-[current=page]:bg-muted aria-[current=page]:text-foreground sm:h-9"
            >
              {k.label}
            </Link>
          ))}
        </nav>
      </div>
      <Card>
        <CardContent className="pt-6">
          {result.items.length === 0 ? (
            <p className="text-sm text-muted-foreground">No accounts match.</p>
          ) : (
            <ul className="divide-y" aria-label="Accounts">
              {result.items.map((a) => (
                <li
                  key={a.id}
                  className="flex flex-col gap-1 py-3 sm:flex-row sm:items-center sm:gap-4"
                  data-user={a.id}
                >
                  <div className="min-w-0 flex-1">
                    <Link href={`/admin/users/${a.id}`} className="font-medium break-all hover:underline">
                      {a.email ?? a.phone ?? (a.isApiKey ? 'API key' : 'Anonymous account')}
                    </Link>
                    <span className="block font-mono text-xs break-all text-muted-foreground">{a.id}</span>
                  </div>
                  <div className="flex flex-wrap items-center gap-1">
                    {a.isApiKey ? <Badge variant="outline">API key</Badge> : null}
                    {a.isAnonymous ? <Badge variant="outline">Anonymous</Badge> : null}
                    {a.isStaff ? <Badge variant="primary">Staff</Badge> : null}
                    {a.bannedUntil ? <Badge variant="danger">Banned</Badge> : null}
                  </div>
                  <span className="text-xs text-muted-foreground sm:w-36 sm:text-right">
                    Joined <RelativeTime date={a.createdAt} />
                  </span>
                </li>
              ))}
            </ul>
          )}
          <Pager
            label="Accounts"
            result={result}
            href={(n) => hrefWith('/admin/users', query, { page: n })}
            className="mt-4"
          />
        </CardContent>
      </Card>
    </>
  );
}
