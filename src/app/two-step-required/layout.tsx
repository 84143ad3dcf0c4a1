// The app's frame (header, navigation, main region) around the page.
import type { ReactNode } from 'react';
import { AppShell } from '@/app/components/app-shell';
import { currentUser } from '@/app/lib/session';

export default async function Layout({ children }: { children: ReactNode }) {
  return <AppShell user={await currentUser()}>{children}</AppShell>;
}
