// Operator console → one account: its identities, second factors, sessions (end one or all), its
// workspaces, and ban (for a chosen time), unban and delete, each asked first where it cannot be
// undone. Every change is made by the console's server actions and recorded in the audit log.
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { ConfirmAction } from '@/app/components/confirm-action';
import { PageHeader } from '@/app/components/page-header';
import { RelativeTime } from '@/app/components/relative-time';
import { Badge } from '@/app/components/ui/badge';
import { Button } from '@/app/components/ui/button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { Label, Select } from '@/app/components/ui/input';
import { SubmitButton } from '@/app/components/ui/submit-button';
import {
  banUserAction,
  deleteUserAction,
  revokeAllSessionsAction,
  revokeSessionAction,
  unbanUserAction,
} from '@/app/actions/operator';
import { requireOperator } from '@/app/lib/operator';
import { accountDetail } from '@/app/lib/queries/operator';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Account · Console' };

export default async function AccountPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  await requireOperator(`/admin/users/${encodeURIComponent(id)}`);
  const account = await accountDetail(id);
  if (!account) notFound();
  const name = account.email ?? account.phone ?? (account.isApiKey ? 'API key' : 'Anonymous account');
  return (
    <>
      <PageHeader
        title={<span className="block whitespace-normal break-all">{name}</span>}
        description={<span className="font-mono break-all">{account.id}</span>}
      />
      <div className="mb-6 flex flex-wrap gap-1">
        {account.isApiKey ? <Badge variant="outline">Workspace API key</Badge> : null}
        {account.isStaff ? <Badge variant="primary">Staff</Badge> : null}
        {account.bannedUntil ? (
          <Badge variant="danger">
            Banned until {account.bannedUntil.toISOString().slice(0, 16).replace('T', ' ')} UTC
          </Badge>
        ) : (
          <Badge variant="success">Active</Badge>
        )}
      </div>
      <div className="grid gap-6 lg:grid-cols-2">
        <Card aria-labelledby="identities">
          <CardHeader>
            <CardTitle id="identities">Sign-in methods</CardTitle>
          </CardHeader>
          <CardContent>
            {account.identities.length === 0 ? (
              <p className="text-sm text-muted-foreground">None.</p>
            ) : (
              <ul className="divide-y text-sm">
                {account.identities.map((i, n) => (
                  <li key={n} className="flex flex-wrap justify-between gap-2 py-2">
                    <span className="font-medium">{i.provider}</span>
                    <span className="break-all text-muted-foreground">{i.email ?? '—'}</span>
                  </li>
                ))}
              </ul>
            )}
          </CardContent>
        </Card>
        <Card aria-labelledby="factors">
          <CardHeader>
            <CardTitle id="factors">Second factors</CardTitle>
          </CardHeader>
          <CardContent>
            {account.factors.length === 0 ? (
              <p className="text-sm text-muted-foreground">None set up.</p>
            ) : (
              <ul className="divide-y text-sm">
                {account.factors.map((f) => (
                  <li key={f.id} className="flex flex-wrap justify-between gap-2 py-2">
                    <span className="font-medium">{f.name || f.type}</span>
                    <span className="text-muted-foreground">
                      {f.type} · {f.status}
                    </span>
                  </li>
                ))}
              </ul>
            )}
          </CardContent>
        </Card>
      </div>
      <Card aria-labelledby="sessions" className="mt-6">
        <CardHeader>
          <CardTitle id="sessions">Sessions</CardTitle>
          <CardDescription>Ending a session stops its access tokens at once.</CardDescription>
        </CardHeader>
        <CardContent>
          {account.sessions.length === 0 ? (
            <p className="text-sm text-muted-foreground">No open sessions.</p>
          ) : (
            <>
              <ul className="divide-y text-sm" aria-label="Open sessions">
                {account.sessions.map((s) => (
                  <li
                    key={s.id}
                    className="flex flex-col gap-2 py-3 sm:flex-row sm:items-center"
                    data-session={s.id}
                  >
                    <div className="min-w-0 flex-1">
                      <span className="block truncate" title={s.userAgent ?? undefined}>
                        {s.userAgent ?? 'Unknown device'}
                      </span>
                      <span className="block text-xs text-muted-foreground">
                        {s.ip ?? '—'} · {s.aal} · started <RelativeTime date={s.createdAt} />
                      </span>
                    </div>
                    <form action={revokeSessionAction}>
                      <input type="hidden" name="user_id" value={account.id} />
                      <input type="hidden" name="session_id" value={s.id} />
                      <SubmitButton variant="outline" size="sm" pendingText="Ending…">
                        End session
                      </SubmitButton>
                    </form>
                  </li>
                ))}
              </ul>
              <form action={revokeAllSessionsAction} className="mt-4">
                <input type="hidden" name="user_id" value={account.id} />
                <SubmitButton variant="outline" pendingText="Ending…">
                  End all sessions
                </SubmitButton>
              </form>
            </>
          )}
        </CardContent>
      </Card>
      <Card aria-labelledby="workspaces" className="mt-6">
        <CardHeader>
          <CardTitle id="workspaces">Workspaces</CardTitle>
        </CardHeader>
        <CardContent>
          {account.workspaces.length === 0 ? (
            <p className="text-sm text-muted-foreground">Not a member of any workspace.</p>
          ) : (
            <ul className="divide-y text-sm">
              {account.workspaces.map((w) => (
                <li key={w.id} className="flex justify-between gap-2 py-2">
                  <Link href={`/admin/workspaces/${w.id}`} className="font-medium hover:underline">
                    {w.name}
                  </Link>
                  <Badge variant="outline">{w.role}</Badge>
                </li>
              ))}
            </ul>
          )}
        </CardContent>
      </Card>
      {account.isApiKey ? (
        <p className="mt-6 text-sm text-muted-foreground">
          A workspace API key is shut out by revoking it in its workspace, not banned or deleted here.
        </p>
      ) : (
        <Card aria-labelledby="standing" className="mt-6">
          <CardHeader>
            <CardTitle id="standing">Ban or delete</CardTitle>
            <CardDescription>
              A ban ends every session and refuses sign-in until it runs out or is lifted.
            </CardDescription>
          </CardHeader>
          <CardContent className="flex flex-col gap-4 sm:flex-row sm:flex-wrap sm:items-end">
            {account.bannedUntil ? (
              <form action={unbanUserAction}>
                <input type="hidden" name="user_id" value={account.id} />
                <SubmitButton variant="outline" pendingText="Lifting…">
                  Lift the ban
                </SubmitButton>
              </form>
            ) : (
              <form action={banUserAction} className="flex flex-wrap items-end gap-2">
                <input type="hidden" name="user_id" value={account.id} />
                <div className="grid gap-1">
                  <Label htmlFor="ban-duration">Ban for</Label>
                  <Select id="ban-duration" name="duration" defaultValue="24h">
                    <option value="1h">1 hour</option>
                    <option value="24h">24 hours</option>
                    <option value="7d">7 days</option>
                    <option value="30d">30 days</option>
                    <option value="forever">Until lifted</option>
                  </Select>
                </div>
                <SubmitButton variant="outline" pendingText="Banning…">
                  Ban
                </SubmitButton>
              </form>
            )}
            <ConfirmAction
              trigger={<Button variant="destructive">Delete account</Button>}
              title="Delete this account?"
              description={`${name} and everything only it owns are removed for good. This cannot be undone.`}
              confirmLabel="Delete account"
              pendingLabel="Deleting…"
              action={deleteUserAction}
              fields={{ user_id: account.id }}
            />
          </CardContent>
        </Card>
      )}
    </>
  );
}
