// The operator console's frame: the app's header and the console's sections. The layout checks
// staff too, but every page, route and action under /admin checks again itself (a layout is not
// run for a server action or a route handler).
import type { ReactNode } from 'react';
import { AppShell } from '@/app/components/app-shell';
import { ConsoleNav } from '@/app/admin/_components/console-nav';
import { operatorForLayout } from '@/app/lib/operator';

export default async function Layout({ children }: { children: ReactNode }) {
  const user = await operatorForLayout();
  if (!user) return <>{children}</>;
  return (
    <AppShell user={user}>
      <ConsoleNav />
      {children}
    </AppShell>
  );
}
