// A workspace's e-mail domains, for its owners and admins (decision 0095): claim one, see how it is
// verified (an owner's address, or the DNS record to publish with "Check now"), choose whether
// people with an address on it join with one click, ask to join, or neither, and remove it.
// Others are told who manages domains.
import { PageHeader } from '@/app/components/page-header';
import { RelativeTime } from '@/app/components/relative-time';
import { Badge } from '@/app/components/ui/badge';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { requireWorkspace } from '@/app/lib/db';
import { workspaceDomains } from '@/app/lib/queries/domains';
import { workspaceTitle } from '@/app/lib/titles';
import {
  AddDomainForm,
  CheckDomainButton,
  DomainPolicyForm,
  RemoveDomain,
} from '@/app/w/[slug]/settings/domains/domain-forms';

export const dynamic = 'force-dynamic';

type Params = { params: Promise<{ slug: string }> };

export const generateMetadata = ({ params }: Params) => workspaceTitle(params, 'Domains');

export default async function DomainsPage({ params }: Params) {
  const { user, workspace } = await requireWorkspace(params, '/settings/domains');
  const manage = workspace.role === 'admin' || workspace.role === 'owner';
  const domains = manage ? await workspaceDomains(user, workspace.id) : [];
  return (
    <>
      <PageHeader
        title="Domains"
        description={`People with a confirmed address on a verified domain can join ${workspace.name}.`}
      />
      {manage ? (
        <div className="grid grid-cols-1 gap-6">
          <Card aria-labelledby="new-domain">
            <CardHeader>
              <CardTitle id="new-domain">Add a domain</CardTitle>
              <CardDescription>
                Your company&apos;s own domain; shared mail services such as gmail.com cannot be added. An
                owner&apos;s confirmed address on it verifies it at once.
              </CardDescription>
            </CardHeader>
            <CardContent>
              <AddDomainForm slug={workspace.slug} workspaceId={workspace.id} />
            </CardContent>
          </Card>
          {domains.length === 0 ? (
            <Card>
              <CardContent className="pt-6">
                <p role="status" className="text-sm text-muted-foreground">
                  No domains yet.
                </p>
              </CardContent>
            </Card>
          ) : null}
          {domains.map((d) => (
            <Card key={d.id} data-domain={d.domain} aria-labelledby={`domain-${d.id}`}>
              <CardHeader>
                <CardTitle id={`domain-${d.id}`} className="flex flex-wrap items-center gap-2 break-all">
                  {d.domain}
                  {d.verified ? (
                    <Badge variant="success">verified</Badge>
                  ) : (
                    <Badge variant="warning">not verified</Badge>
                  )}
                </CardTitle>
                <CardDescription>
                  {d.verified_by === 'owner_email'
                    ? "Verified by an owner's confirmed address on it."
                    : d.verified_by === 'dns'
                      ? 'Verified by its DNS record; keep the record, it is checked again regularly.'
                      : d.held_elsewhere
                        ? "Another workspace has verified this domain. If it is yours, publish this TXT record and check: a DNS record takes over a domain verified by an owner's address."
                        : 'Publish this TXT record, then check. An owner with an address on it verifies it too.'}
                  {d.last_checked_at ? (
                    <>
                      {' '}
                      Last checked <RelativeTime date={d.last_checked_at} />.
                    </>
                  ) : null}
                </CardDescription>
              </CardHeader>
              <CardContent className="grid grid-cols-1 gap-4">
                {d.verified_by !== 'owner_email' ? (
                  <dl className="grid grid-cols-1 gap-2 rounded-md border bg-muted/40 p-3 text-sm sm:grid-cols-[6rem_minmax(0,1fr)]">
                    <dt className="text-muted-foreground">Type</dt>
                    <dd>TXT</dd>
                    <dt className="text-muted-foreground">Name</dt>
                    <dd>
                      <code className="break-all">{d.dns_record_name}</code>
                    </dd>
                    <dt className="text-muted-foreground">Value</dt>
                    <dd>
                      <code className="break-all">{d.dns_record_value}</code>
                    </dd>
                  </dl>
                ) : null}
                <DomainPolicyForm slug={workspace.slug} domain={d} />
                {!d.verified ? (
                  <p className="text-sm text-muted-foreground">Verify the domain to let people join by it.</p>
                ) : null}
                <div className="flex flex-wrap gap-2">
                  {d.verified_by !== 'owner_email' ? (
                    <CheckDomainButton slug={workspace.slug} workspaceId={workspace.id} domainId={d.id} />
                  ) : null}
                  <RemoveDomain slug={workspace.slug} workspaceId={workspace.id} domain={d} />
                </div>
              </CardContent>
            </Card>
          ))}
        </div>
      ) : (
        <Card>
          <CardContent className="pt-6">
            <p className="text-sm text-muted-foreground">Only admins and owners manage domains.</p>
          </CardContent>
        </Card>
      )}
    </>
  );
}
