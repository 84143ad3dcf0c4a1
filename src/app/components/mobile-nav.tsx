'use client';
// The navigation on phones: one menu button opens a panel with the workspace's pages, the first
// few workspaces (the rest on /workspaces), the account pages, the theme and sign out; every
// target is at least 44 px tall.
import { Bell, LayoutGrid, LogOut, Menu, Search, ShieldCheck, UserRound } from 'lucide-react';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { useState } from 'react';
import { signOutAction } from '@/app/actions/auth';
import { Avatar } from '@/app/components/ui/avatar';
import { Button } from '@/app/components/ui/button';
import { cn } from '@/app/components/ui/cn';
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogTitle,
  DialogTrigger,
} from '@/app/components/ui/dialog';
import { WORKSPACE_TABS } from '@/app/components/workspace-tabs';
import { THEMES } from '@/app/components/theme-menu';
import type { MenuUser } from '@/app/components/user-menu';
import type { SwitcherWorkspace } from '@/app/components/workspace-switcher';
import { applyTheme, type Theme } from '@/app/lib/theme-cookie';

const rowClass =
  'flex min-h-11 items-center gap-3 rounded-md px-3 text-sm hover:bg-accent [&_svg]:size-4 [&_svg]:text-muted-foreground';

export function MobileNav({
  user,
  theme: initialTheme,
  workspaces,
  more = false,
  current,
}: {
  user: MenuUser;
  theme: Theme;
  workspaces: SwitcherWorkspace[];
  /** the user has more workspaces than these */
  more?: boolean;
  current?: SwitcherWorkspace;
}) {
  const [open, setOpen] = useState(false);
  const [theme, setTheme] = useState(initialTheme);
  const pathname = usePathname();
  const close = () => setOpen(false);
  return (
    <Dialog open={open} onOpenChange={setOpen}>
      <DialogTrigger asChild>
        <Button variant="ghost" size="icon" aria-label="Open navigation" className="md:hidden">
          <Menu aria-hidden="true" />
        </Button>
      </DialogTrigger>
      <DialogContent className="top-0 left-auto right-0 h-dvh max-h-dvh w-[min(22rem,100vw)] max-w-none translate-x-0 translate-y-0 content-start gap-2 rounded-none border-y-0 border-r-0 p-4">
        <DialogTitle className="flex items-center gap-3 pr-10 text-base">
          <Avatar name={user.name} seed={user.id} src={user.avatarUrl} />
          <span className="min-w-0 truncate">{user.name}</span>
        </DialogTitle>
        <DialogDescription className="sr-only">Pages of Tenantry</DialogDescription>
        <nav aria-label="Main" className="grid grid-cols-1 gap-4 pt-2">
          {current ? (
            <div>
              <p className="px-3 pb-1 text-xs font-medium text-muted-foreground">{current.name}</p>
              {WORKSPACE_TABS.map(([path, label]) => {
                const href = `/w/${current.slug}${path}`;
                return (
                  <Link
                    key={path}
                    href={href}
                    onClick={close}
                    aria-current={pathname === href ? 'page' : undefined}
                    className={cn(rowClass, pathname === href && 'bg-accent font-medium')}
                  >
                    {label}
                  </Link>
                );
              })}
            </div>
          ) : null}
          <div>
            <p className="px-3 pb-1 text-xs font-medium text-muted-foreground">Workspaces</p>
            {workspaces.map((w) => (
              <Link
                key={w.slug}
                href={`/w/${w.slug}`}
                onClick={close}
                aria-current={w.slug === current?.slug ? 'true' : undefined}
                className={cn(rowClass, w.slug === current?.slug && 'font-medium')}
              >
                <span className="truncate">{w.name}</span>
              </Link>
            ))}
            {more ? (
              <Link href="/workspaces#find-workspace" onClick={close} className={rowClass}>
                <Search aria-hidden="true" />
                Find a workspace…
              </Link>
            ) : null}
            <Link href="/workspaces" onClick={close} className={rowClass}>
              <LayoutGrid aria-hidden="true" />
              All workspaces
            </Link>
          </div>
          <div>
            <p className="px-3 pb-1 text-xs font-medium text-muted-foreground">Account</p>
            <Link href="/settings/profile" onClick={close} className={rowClass}>
              <UserRound aria-hidden="true" />
              Profile
            </Link>
            <Link href="/settings/security" onClick={close} className={rowClass}>
              <ShieldCheck aria-hidden="true" />
              Security
            </Link>
            <Link href="/settings/notifications" onClick={close} className={rowClass}>
              <Bell aria-hidden="true" />
              Notifications
            </Link>
          </div>
          <fieldset className="px-3">
            <legend className="pb-2 text-xs font-medium text-muted-foreground">Theme</legend>
            <div className="grid grid-cols-3 gap-1 rounded-md bg-muted p-1">
              {THEMES.map(({ value, label, icon: Icon }) => (
                <button
                  key={value}
                  type="button"
                  aria-pressed={theme === value}
                  onClick={() => {
                    setTheme(value);
                    applyTheme(value);
                  }}
                  className={cn(
                    'inline-flex min-h-11 cursor-pointer items-center justify-center gap-1.5 rounded-sm text-sm',
                    theme === value ? 'bg-card font-medium shadow-sm' : 'text-muted-foreground',
                  )}
                >
                  <Icon className="size-4" aria-hidden="true" />
                  {label}
                </button>
              ))}
            </div>
          </fieldset>
          <form action={signOutAction}>
            <button type="submit" className={cn(rowClass, 'w-full cursor-pointer')}>
              <LogOut aria-hidden="true" />
              Sign out
            </button>
          </form>
        </nav>
      </DialogContent>
    </Dialog>
  );
}
