// The frame of the page for a link opened in another browser (components/auth-shell.tsx).
import type { ReactNode } from 'react';
import { AuthShell } from '@/app/components/auth-shell';

export default function Layout({ children }: { children: ReactNode }) {
  return <AuthShell>{children}</AuthShell>;
}
