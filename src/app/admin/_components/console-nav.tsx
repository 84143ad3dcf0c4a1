'use client';
// The operator console's sections as tabs (the current one marked for assistive technology);
// narrower on a phone so all five fit at 390 px; with larger text they scroll sideways rather
// than wrap.
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { cn } from '@/app/components/ui/cn';

const SECTIONS = [
  { href: '/admin/users', label: 'Users' },
  { href: '/admin/workspaces', label: 'Workspaces' },
  { href: '/admin/billing', label: 'Billing' },
  { href: '/admin/mail', label: 'Mail' },
  { href: '/admin/audit', label: 'Audit log' },
];

export function ConsoleNav() {
  const path = usePathname();
  return (
    <nav aria-label="Operator console" className="-mx-3 mb-6 overflow-x-auto border-b px-3 sm:mx-0 sm:px-0">
      <ul className="flex sm:gap-1">
        {SECTIONS.map((s) => {
          const current = path === s.href || path.startsWith(`${s.href}/`);
          return (
            <li key={s.href}>
              <Link
                href={s.href}
                aria-current={current ? 'page' : undefined}
                className={cn(
                  'inline-flex h-11 items-center border-b-2 px-2 text-sm font-medium whitespace-nowrap sm:px-3',
                  current
                    ? 'border-primary text-foreground'
                    : 'border-transparent text-muted-foreground hover:text-foreground',
                )}
              >
                {s.label}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
