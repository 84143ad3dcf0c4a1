// Where a member lands who opens a workspace that requires two-step verification without having
// passed it: the workspace's name (only when the database confirms it is theirs and locked) and
// the way forward, setting up an authenticator app. Anything else is not found.
import { ShieldAlert } from 'lucide-react';
import Link from 'next/link';
import { notFound, redirect } from 'next/navigation';
import { PageHeader } from '@/app/components/page-header';
import { Button } from '@/app/components/ui/button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { lockedWorkspace, workspaceBySlug } from '@/app/lib/queries/workspaces';
import { requireUser } from '@/app/lib/session';
import { slugParam } from '@/app/lib/slug-param';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Two-step verification required' };

export default async function TwoStepRequiredPage({ params }: { params: Promise<{ slug: string }> }) {
  const slug = await slugParam(params);
  if (!slug) notFound();
  const user = await requireUser(`/two-step-required/${slug}`);
  if (await workspaceBySlug(user, slug)) redirect(`/w/${slug}`);
  const locked = await lockedWorkspace(user, slug);
  if (!locked) notFound();
  return (
    <>
      <PageHeader title={locked.name} description={`/${locked.slug}`} />
      <Card aria-labelledby="required" className="max-w-2xl">
        <CardHeader>
          <CardTitle id="required" className="flex items-center gap-2">
            <ShieldAlert aria-hidden="true" className="size-5 text-primary" />
            This workspace requires two-step verification
          </CardTitle>
          <CardDescription>
            Its admins ask every member to sign in with a code from an authenticator app as well as a
            password. Set it up for your account, and {locked.name} opens again.
          </CardDescription>
        </CardHeader>
        <CardContent className="flex flex-col gap-3 sm:flex-row">
          <Button asChild>
            <Link href="/settings/security">Set up two-step verification</Link>
          </Button>
          <Button variant="outline" asChild>
            <Link href="/workspaces">All workspaces</Link>
          </Button>
        </CardContent>
      </Card>
    </>
  );
}
