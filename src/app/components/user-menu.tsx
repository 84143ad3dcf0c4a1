'use client';
// The account menu in the header: who is signed in, profile, notifications, the theme, and
// sign out. Sign out submits a form outside the menu, so closing the menu cannot cut it short.
import { Bell, LogOut, ShieldCheck, UserRound } from 'lucide-react';
import Link from 'next/link';
import { useRef } from 'react';
import { signOutAction } from '@/app/actions/auth';
import { ThemeRadioItems } from '@/app/components/theme-menu';
import { Avatar } from '@/app/components/ui/avatar';
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuLabel,
  DropdownMenuSeparator,
  DropdownMenuTrigger,
} from '@/app/components/ui/dropdown-menu';
import type { Theme } from '@/app/lib/theme-cookie';

export interface MenuUser {
  id: string;
  email: string;
  name: string;
  avatarUrl: string | null;
}

export function UserMenu({ user, theme }: { user: MenuUser; theme: Theme }) {
  const signOut = useRef<HTMLFormElement>(null);
  return (
    <>
      <form ref={signOut} action={signOutAction} hidden />
      <DropdownMenu>
        <DropdownMenuTrigger
          data-account-menu=""
          className="inline-flex size-11 cursor-pointer items-center justify-center rounded-full hover:bg-accent data-[state=open]:bg-accent sm:size-9"
        >
          <Avatar name={user.name} seed={user.id} src={user.avatarUrl} />
          <span className="sr-only">Account menu</span>
        </DropdownMenuTrigger>
        <DropdownMenuContent align="end" className="w-64">
          <DropdownMenuLabel className="font-normal">
            <span className="block truncate text-sm font-medium text-foreground">{user.name}</span>
            {user.name !== user.email ? (
              <span className="block truncate text-xs text-muted-foreground">{user.email}</span>
            ) : null}
          </DropdownMenuLabel>
          <DropdownMenuSeparator />
          <DropdownMenuItem asChild>
            <Link href="/settings/profile">
              <UserRound aria-hidden="true" />
              Profile
            </Link>
          </DropdownMenuItem>
          <DropdownMenuItem asChild>
            <Link href="/settings/security">
              <ShieldCheck aria-hidden="true" />
              Security
            </Link>
          </DropdownMenuItem>
          <DropdownMenuItem asChild>
            <Link href="/settings/notifications">
              <Bell aria-hidden="true" />
              Notifications
            </Link>
          </DropdownMenuItem>
          <DropdownMenuSeparator />
          <ThemeRadioItems initial={theme} />
          <DropdownMenuSeparator />
          <DropdownMenuItem onSelect={() => signOut.current?.requestSubmit()}>
            <LogOut aria-hidden="true" />
            Sign out
          </DropdownMenuItem>
        </DropdownMenuContent>
      </DropdownMenu>
    </>
  );
}
