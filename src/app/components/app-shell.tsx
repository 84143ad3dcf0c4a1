// The frame of every signed-in page: a header with the product, the current workspace and its
// switcher (logos where set), on a workspace's pages its live connection (who else is viewing,
// "Reconnecting…"), the account menu (or, on phones, one navigation button), the workspace's
// tabs, and the page's main region. Signed-out visitors (an invitation link) get the header with "Sign in".
import Link from 'next/link';
import type { ReactNode } from 'react';
import { LiveWorkspace } from '@/app/components/live-workspace';
import { Logo } from '@/app/components/logo';
import { MobileNav } from '@/app/components/mobile-nav';
import { Button } from '@/app/components/ui/button';
import { UserMenu, type MenuUser } from '@/app/components/user-menu';
import { WorkspaceSwitcher } from '@/app/components/workspace-switcher';
import { WorkspaceTabs } from '@/app/components/workspace-tabs';
import { ThemeToggle } from '@/app/components/theme-toggle';
import { APP_BUCKETS, readableUrls } from '@/app/lib/files';
import { myProfile } from '@/app/lib/queries/profile';
import { switcherWorkspaces, type WorkspaceAccess } from '@/app/lib/queries/workspaces';
import type { SignedIn } from '@/app/lib/session';
import { chosenTheme } from '@/app/lib/theme';
import { getRuntime } from '@/server/runtime';
import { PastDueBanner } from '@/app/components/past-due-banner';

export async function AppShell({
  user,
  workspace,
  children,
}: {
  user: SignedIn | null;
  workspace?: WorkspaceAccess | null;
  children: ReactNode;
}) {
  const theme = await chosenTheme();
  // The switcher is on every page: it gets the first few workspaces, never the whole list.
  const [profile, switcher] = user
    ? await Promise.all([myProfile(user), switcherWorkspaces(user)])
    : [null, { items: [], more: false }];
  const menuUser: MenuUser | null =
    user && profile
      ? {
          id: user.userId,
          email: profile.email,
          name: profile.displayName || profile.email,
          avatarUrl: profile.avatarUrl,
        }
      : null;
  // Logos the viewer may see, signed for the browser in one query for the whole header.
  const logos =
    user && (workspace?.logoPath || switcher.items.some((w) => w.logoPath))
      ? await readableUrls(user, APP_BUCKETS.logos, [
          workspace?.logoPath,
          ...switcher.items.map((w) => w.logoPath),
        ])
      : new Map<string, string>();
  const logoOf = (path: string | null | undefined) => (path ? (logos.get(path) ?? null) : null);
  const switchable = switcher.items.map((w) => ({
    slug: w.slug,
    name: w.name,
    role: w.role,
    logoUrl: logoOf(w.logoPath),
  }));
  const current = workspace
    ? {
        slug: workspace.slug,
        name: workspace.name,
        role: workspace.role,
        logoUrl: logoOf(workspace.logoPath),
      }
    : undefined;
  return (
    <>
      <header className="sticky top-0 z-40 border-b bg-surface">
        <div className="mx-auto flex h-14 w-full max-w-6xl items-center gap-1 px-3 sm:gap-2 sm:px-6">
          <Link
            href={user ? '/workspaces' : '/'}
            className="inline-flex h-11 items-center rounded-md px-1 sm:h-9"
            aria-label="Tenantry home"
          >
            <Logo nameClassName={user ? 'hidden sm:inline' : undefined} />
          </Link>
          {user ? (
            <>
              <span aria-hidden="true" className="text-lg text-border select-none">
                /
              </span>
              <WorkspaceSwitcher workspaces={switchable} more={switcher.more} current={current} />
            </>
          ) : null}
          <div className="ml-auto flex items-center gap-1">
            {user && workspace ? (
              <LiveWorkspace
                workspaceId={workspace.id}
                slug={workspace.slug}
                userId={user.userId}
                apiKey={getRuntime().config.projectApiKey}
              />
            ) : null}
            {menuUser ? (
              <>
                <div className="hidden md:block">
                  <UserMenu user={menuUser} theme={theme} />
                </div>
                <MobileNav
                  user={menuUser}
                  theme={theme}
                  workspaces={switchable}
                  more={switcher.more}
                  current={current}
                />
              </>
            ) : (
              <>
                <ThemeToggle initial={theme} />
                <Button asChild variant="outline" size="sm">
                  <Link href="/sign-in">Sign in</Link>
                </Button>
              </>
            )}
          </div>
        </div>
        {workspace ? (
          <div className="mx-auto w-full max-w-6xl px-3 sm:px-6">
            <WorkspaceTabs slug={workspace.slug} />
          </div>
        ) : null}
      </header>
      {workspace?.pastDue ? <PastDueBanner slug={workspace.slug} owner={workspace.role === 'owner'} /> : null}
      <main
        id="main"
        tabIndex={-1}
        className="mx-auto w-full max-w-6xl px-4 py-8 outline-none sm:px-6 sm:py-10"
      >
        {children}
      </main>
    </>
  );
}
