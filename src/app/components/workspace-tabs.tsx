'use client';
// A workspace's tabs, with the open one marked (aria-current and an underline). On phones the
// row scrolls on its own if it must; the page never scrolls sideways.
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { cn } from '@/app/components/ui/cn';

export const WORKSPACE_TABS = [
  ['', 'Overview'],
  ['/members', 'Members'],
  ['/settings', 'Settings'],
  ['/billing', 'Billing'],
] as const;

export function WorkspaceTabs({ slug }: { slug: string }) {
  const pathname = usePathname();
  const base = `/w/${slug}`;
  return (
    <nav aria-label="Workspace" className="-mb-px overflow-x-auto">
      <ul className="flex gap-1">
        {WORKSPACE_TABS.map(([path, label]) => {
          const href = base + path;
          const active = pathname === href;
          return (
            <li key={path}>
              <Link
                href={href}
                aria-current={active ? 'page' : undefined}
                className={cn(
                  'inline-flex h-11 items-center border-b-2 px-3 text-sm whitespace-nowrap transition-colors',
                  active
                    ? 'border-foreground font-medium text-foreground'
                    : 'border-transparent text-muted-foreground hover:text-foreground',
                )}
              >
                {label}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
