// The frame of a workspace's pages: the header shows the workspace in the switcher, its tabs and,
// when a payment is overdue, the banner. The pages themselves check access (and send an old
// address on to the current one); for an address that is not a workspace of the user the frame
// stays neutral, revealing nothing.
import type { ReactNode } from 'react';
import { AppShell } from '@/app/components/app-shell';
import { workspaceBySlug } from '@/app/lib/queries/workspaces';
import { currentUser } from '@/app/lib/session';
import { slugParam } from '@/app/lib/slug-param';

export default async function WorkspaceLayout({
  children,
  params,
}: {
  children: ReactNode;
  params: Promise<{ slug: string }>;
}) {
  const slug = await slugParam(params);
  const user = await currentUser();
  const workspace = user && slug ? await workspaceBySlug(user, slug) : null;
  return (
    <AppShell user={user} workspace={workspace}>
      {children}
    </AppShell>
  );
}
