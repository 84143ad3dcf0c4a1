'use client';
// The header's workspace switcher: the current workspace (its logo or initial), and a menu
// (keyboard accessible: arrows, Enter, Escape, type-ahead) of the first few workspaces by name,
// "All workspaces" (where every one of them can be searched and paged) and "New workspace". The
// menu is rendered on every page, so it never lists more than the server sends (SWITCHER_SIZE).
import { Check, ChevronsUpDown, LayoutGrid, Plus, Search } from 'lucide-react';
import Link from 'next/link';
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuLabel,
  DropdownMenuSeparator,
  DropdownMenuTrigger,
} from '@/app/components/ui/dropdown-menu';
import { WorkspaceMark } from '@/app/components/workspace-mark';

export interface SwitcherWorkspace {
  slug: string;
  name: string;
  role: string;
  /** where the browser fetches its logo, or null for its initial */
  logoUrl?: string | null;
}

const Mark = WorkspaceMark;

export function WorkspaceSwitcher({
  workspaces,
  more = false,
  current,
}: {
  workspaces: SwitcherWorkspace[];
  /** the user has more workspaces than these */
  more?: boolean;
  current?: SwitcherWorkspace;
}) {
  // The current workspace is always in the menu, even when it is not among the first few.
  const listed =
    current && !workspaces.some((w) => w.slug === current.slug) ? [current, ...workspaces] : workspaces;
  return (
    <DropdownMenu>
      <DropdownMenuTrigger
        data-workspace-switcher=""
        className="inline-flex h-11 max-w-[11rem] min-w-0 cursor-pointer items-center gap-2 rounded-md px-2 text-sm font-medium hover:bg-accent data-[state=open]:bg-accent sm:h-9 sm:max-w-[18rem]"
      >
        {current ? (
          <Mark name={current.name} logoUrl={current.logoUrl} />
        ) : (
          <LayoutGrid className="size-4" aria-hidden="true" />
        )}
        <span className="truncate" data-current-workspace={current?.slug}>
          {current ? current.name : 'Workspaces'}
        </span>
        <span className="sr-only">{current ? ', switch workspace' : ': switch to one'}</span>
        <ChevronsUpDown className="size-4 shrink-0 text-muted-foreground" aria-hidden="true" />
      </DropdownMenuTrigger>
      <DropdownMenuContent align="start" className="w-64">
        <DropdownMenuLabel>Workspaces</DropdownMenuLabel>
        {listed.length === 0 ? (
          <p className="px-2 py-1.5 text-sm text-muted-foreground">None yet</p>
        ) : (
          listed.map((w) => (
            // The mark's initial is part of the item's text; type-ahead should match the name alone.
            <DropdownMenuItem key={w.slug} asChild textValue={w.name}>
              <Link href={`/w/${w.slug}`} aria-current={w.slug === current?.slug ? 'true' : undefined}>
                <Mark name={w.name} logoUrl={w.logoUrl} className="size-5 text-[0.625rem]" />
                <span className="min-w-0 flex-1 truncate">{w.name}</span>
                {w.slug === current?.slug ? <Check aria-label="current" className="ml-auto" /> : null}
              </Link>
            </DropdownMenuItem>
          ))
        )}
        <DropdownMenuSeparator />
        {more ? (
          <DropdownMenuItem asChild>
            <Link href="/workspaces#find-workspace">
              <Search aria-hidden="true" />
              Find a workspace…
            </Link>
          </DropdownMenuItem>
        ) : null}
        <DropdownMenuItem asChild>
          <Link href="/workspaces">
            <LayoutGrid aria-hidden="true" />
            All workspaces
          </Link>
        </DropdownMenuItem>
        <DropdownMenuItem asChild>
          <Link href="/workspaces?new=1#new-workspace">
            <Plus aria-hidden="true" />
            New workspace
          </Link>
        </DropdownMenuItem>
      </DropdownMenuContent>
    </DropdownMenu>
  );
}
