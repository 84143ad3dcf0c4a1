// The frame of the OAuth consent page (components/auth-shell.tsx), as for signing in.
import type { ReactNode } from 'react';
import { AuthShell } from '@/app/components/auth-shell';

export default function Layout({ children }: { children: ReactNode }) {
  return <AuthShell>{children}</AuthShell>;
}
