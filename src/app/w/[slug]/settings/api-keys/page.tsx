// A workspace's API keys, for its owners and admins: make one for a program (the secret shown
// once), see each key's role, prefix, maker and when it was made, expires and was last used, and
// revoke it (asked first). Others are told who manages keys (decision 0091).
import { PageHeader } from '@/app/components/page-header';
import { RelativeTime } from '@/app/components/relative-time';
import { Badge } from '@/app/components/ui/badge';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { asUser, requireWorkspace } from '@/app/lib/db';
import { invitableRoles } from '@/app/lib/queries/members';
import { workspaceTitle } from '@/app/lib/titles';
import { count } from '@/server/text/counts';
import { CreateApiKeyForm, RevokeApiKey } from '@/app/w/[slug]/settings/api-keys/api-key-forms';

export const dynamic = 'force-dynamic';

type Params = { params: Promise<{ slug: string }> };

export const generateMetadata = ({ params }: Params) => workspaceTitle(params, 'API keys');

interface ListedKey {
  id: string;
  name: string;
  role: string;
  prefix: string;
  created_by: string | null;
  created_by_name: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

export default async function ApiKeysPage({ params }: Params) {
  const { user, workspace } = await requireWorkspace(params, '/settings/api-keys');
  const manage = workspace.role === 'admin' || workspace.role === 'owner';
  const keys = manage
    ? await asUser(user, async (tx) => {
        const r = await tx.query<{ key: ListedKey }>('select public.list_api_keys($1) as key', [
          workspace.id,
        ]);
        const listed = r.rows.map((row) => row.key);
        // Makers are named as elsewhere in the app: their name, else their address (readable while
        // they are coworkers; a maker who left is "a former member").
        const makers = await tx.query<{ id: string; name: string }>(
          `select id, coalesce(nullif(display_name, ''), email) as name from public.profiles where id = any($1::uuid[])`,
          [listed.map((k) => k.created_by).filter((id): id is string => id !== null)],
        );
        const names = new Map(makers.rows.map((m) => [m.id, m.name]));
        return listed.map((k) => ({
          ...k,
          created_by_name: k.created_by ? (names.get(k.created_by) ?? null) : null,
        }));
      })
    : [];
  const now = Date.now();
  const live = keys.filter((k) => !k.revoked_at && (!k.expires_at || Date.parse(k.expires_at) > now));
  return (
    <>
      <PageHeader
        title="API keys"
        description={`Keys let programs work in ${workspace.name} with a role, as a member would.`}
      />
      {manage ? (
        <div className="grid grid-cols-1 gap-6">
          <Card aria-labelledby="new-key">
            <CardHeader>
              <CardTitle id="new-key">Create a key</CardTitle>
              <CardDescription>
                Send it as <code>Authorization: Bearer tnt_…</code>. It reaches this workspace only, never
                with a role above yours.
              </CardDescription>
            </CardHeader>
            <CardContent>
              <CreateApiKeyForm
                slug={workspace.slug}
                workspaceId={workspace.id}
                roles={invitableRoles(workspace.role)}
              />
            </CardContent>
          </Card>
          <Card aria-labelledby="keys">
            <CardHeader>
              <CardTitle id="keys">Keys</CardTitle>
              <CardDescription>{count(live.length, 'key')} in use</CardDescription>
            </CardHeader>
            <CardContent className="px-0 sm:px-0">
              {keys.length === 0 ? (
                <p role="status" className="border-t px-5 py-6 text-sm text-muted-foreground sm:px-6">
                  No keys yet.
                </p>
              ) : null}
              <ul aria-label="API keys" className="divide-y border-t empty:hidden">
                {keys.map((k) => {
                  const expired = !k.revoked_at && k.expires_at !== null && Date.parse(k.expires_at) <= now;
                  return (
                    <li
                      key={k.id}
                      data-api-key={k.name}
                      className="flex flex-wrap items-center gap-x-3 gap-y-2 px-5 py-3 sm:px-6"
                    >
                      <span className="min-w-0 flex-1">
                        <span className="flex flex-wrap items-center gap-2 text-sm font-medium">
                          <span className="truncate">{k.name}</span>
                          <Badge>{k.role}</Badge>
                          {k.revoked_at ? <Badge variant="danger">revoked</Badge> : null}
                          {expired ? <Badge variant="warning">expired</Badge> : null}
                        </span>
                        <span className="block text-sm text-muted-foreground">
                          <code>{k.prefix}…</code> · made by {k.created_by_name ?? 'a former member'}{' '}
                          <RelativeTime date={k.created_at} /> ·{' '}
                          {k.expires_at ? (
                            <>
                              {expired ? 'expired' : 'expires'} <RelativeTime date={k.expires_at} />
                            </>
                          ) : (
                            'never expires'
                          )}{' '}
                          ·{' '}
                          {k.last_used_at ? (
                            <>
                              last used <RelativeTime date={k.last_used_at} />
                            </>
                          ) : (
                            'never used'
                          )}
                        </span>
                      </span>
                      {!k.revoked_at && !expired ? (
                        <RevokeApiKey slug={workspace.slug} apiKey={{ id: k.id, name: k.name }} />
                      ) : null}
                    </li>
                  );
                })}
              </ul>
            </CardContent>
          </Card>
        </div>
      ) : (
        <Card>
          <CardContent className="pt-6">
            <p className="text-sm text-muted-foreground">Only admins and owners manage API keys.</p>
          </CardContent>
        </Card>
      )}
    </>
  );
}
