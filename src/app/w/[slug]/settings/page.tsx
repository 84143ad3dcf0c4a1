// Workspace settings: name and address, the logo (admins and owners), the way to the audit log
// and to the API keys (admins and owners), and deletion (owners, asked in a dialog with the address typed to confirm).
// Others see the settings and who may change them.
import Link from 'next/link';
import { PageHeader } from '@/app/components/page-header';
import { buttonVariants } from '@/app/components/ui/button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { WorkspaceMark } from '@/app/components/workspace-mark';
import { requireWorkspace } from '@/app/lib/db';
import { APP_BUCKETS, pictureUrl } from '@/app/lib/files';
import { workspaceTitle } from '@/app/lib/titles';
import { DeleteWorkspace, RenameWorkspaceForm } from '@/app/w/[slug]/settings/settings-forms';
import { LogoSettings } from '@/app/w/[slug]/settings/logo-settings';
import { RequireMfaForm } from '@/app/w/[slug]/settings/require-mfa-form';
import { getRuntime } from '@/server/runtime';

export const dynamic = 'force-dynamic';

type Params = { params: Promise<{ slug: string }> };

export const generateMetadata = ({ params }: Params) => workspaceTitle(params, 'Settings');

export default async function SettingsPage({ params }: Params) {
  const { user, workspace } = await requireWorkspace(params, '/settings');
  const canEdit = workspace.role === 'admin' || workspace.role === 'owner';
  const ws = { id: workspace.id, name: workspace.name, slug: workspace.slug };
  const logoUrl = await pictureUrl(user, APP_BUCKETS.logos, workspace.logoPath);
  return (
    <>
      <PageHeader title="Settings" description={`How ${workspace.name} is named and found.`} />
      <div className="grid grid-cols-1 gap-6">
        <Card aria-labelledby="general">
          <CardHeader>
            <CardTitle id="general">Name and address</CardTitle>
            <CardDescription>
              The address is the last part of the workspace&apos;s links: /w/{workspace.slug}
            </CardDescription>
          </CardHeader>
          <CardContent>
            {canEdit ? (
              <RenameWorkspaceForm workspace={ws} />
            ) : (
              <dl className="grid grid-cols-1 gap-3 text-sm sm:grid-cols-[8rem_1fr]">
                <dt className="text-muted-foreground">Name</dt>
                <dd className="font-medium">{workspace.name}</dd>
                <dt className="text-muted-foreground">Address</dt>
                <dd className="font-medium">/w/{workspace.slug}</dd>
                <dd className="text-muted-foreground sm:col-span-2">Only admins and owners change these.</dd>
              </dl>
            )}
          </CardContent>
        </Card>
        <Card aria-labelledby="logo">
          <CardHeader className="flex-row items-center gap-4">
            <WorkspaceMark name={workspace.name} logoUrl={logoUrl} className="size-12 text-lg" />
            <div className="min-w-0">
              <CardTitle id="logo">Logo</CardTitle>
              <CardDescription>
                {logoUrl
                  ? 'Shown to members in the workspace switcher and on the overview.'
                  : 'Without a logo, members see the first letter of the name.'}
              </CardDescription>
            </div>
          </CardHeader>
          <CardContent>
            {canEdit ? (
              <LogoSettings
                workspace={ws}
                hasLogo={Boolean(workspace.logoPath)}
                maxBytes={getRuntime().config.appFiles.pictureMaxBytes}
              />
            ) : (
              <p className="text-sm text-muted-foreground">Only admins and owners change the logo.</p>
            )}
          </CardContent>
        </Card>
        <Card aria-labelledby="require-mfa">
          <CardHeader>
            <CardTitle id="require-mfa">Two-step verification</CardTitle>
            <CardDescription>
              {workspace.requireMfa
                ? 'Required: members see this workspace only after signing in with a code from their authenticator app.'
                : 'Not required: members can open this workspace with their password alone.'}
            </CardDescription>
          </CardHeader>
          <CardContent>
            {canEdit ? (
              <RequireMfaForm workspace={ws} required={workspace.requireMfa} canChange={user.aal2} />
            ) : (
              <p className="text-sm text-muted-foreground">Only admins and owners change this.</p>
            )}
          </CardContent>
        </Card>
        {canEdit ? (
          <Card aria-labelledby="audit-log">
            <CardHeader>
              <CardTitle id="audit-log">Audit log</CardTitle>
              <CardDescription>
                Who changed members, roles, invitations, settings and billing, when and from where.
              </CardDescription>
            </CardHeader>
            <CardContent>
              <Link className={buttonVariants({ variant: 'outline' })} href={`/w/${workspace.slug}/audit`}>
                Open the audit log
              </Link>
            </CardContent>
          </Card>
        ) : null}
        {canEdit ? (
          <Card aria-labelledby="api-keys">
            <CardHeader>
              <CardTitle id="api-keys">API keys</CardTitle>
              <CardDescription>
                Keys for programs that work in this workspace with a role, as a member would.
              </CardDescription>
            </CardHeader>
            <CardContent>
              <Link
                className={buttonVariants({ variant: 'outline' })}
                href={`/w/${workspace.slug}/settings/api-keys`}
              >
                Manage API keys
              </Link>
            </CardContent>
          </Card>
        ) : null}
        {canEdit ? (
          <Card aria-labelledby="domains">
            <CardHeader>
              <CardTitle id="domains">Domains</CardTitle>
              <CardDescription>
                Let people with an address on your company&apos;s verified domain join, or ask to join.
              </CardDescription>
            </CardHeader>
            <CardContent>
              <Link
                className={buttonVariants({ variant: 'outline' })}
                href={`/w/${workspace.slug}/settings/domains`}
              >
                Manage domains
              </Link>
            </CardContent>
          </Card>
        ) : null}
        {canEdit ? (
          <Card aria-labelledby="webhooks">
            <CardHeader>
              <CardTitle id="webhooks">Webhooks</CardTitle>
              <CardDescription>
                Send this workspace&apos;s events to your own systems, signed.
              </CardDescription>
            </CardHeader>
            <CardContent>
              <Link
                className={buttonVariants({ variant: 'outline' })}
                href={`/w/${workspace.slug}/settings/webhooks`}
              >
                Manage webhooks
              </Link>
            </CardContent>
          </Card>
        ) : null}
        {workspace.role === 'owner' ? (
          <Card aria-labelledby="danger" className="border-destructive/40">
            <CardHeader>
              <CardTitle id="danger">Delete this workspace</CardTitle>
              <CardDescription>
                Everything in it is deleted: members, invitations, projects and activity. This cannot be
                undone.
              </CardDescription>
            </CardHeader>
            <CardContent>
              <DeleteWorkspace workspace={ws} />
            </CardContent>
          </Card>
        ) : null}
      </div>
    </>
  );
}
