// The frame of the signing-in pages: the product's mark, one centred card, the theme toggle.
import Link from 'next/link';
import type { ReactNode } from 'react';
import { Logo } from '@/app/components/logo';
import { ThemeToggle } from '@/app/components/theme-toggle';
import { chosenTheme } from '@/app/lib/theme';

export async function AuthShell({ children }: { children: ReactNode }) {
  const theme = await chosenTheme();
  return (
    <div className="flex min-h-dvh flex-col">
      <header className="mx-auto flex h-14 w-full max-w-6xl items-center justify-between px-4 sm:px-6">
        <Link href="/" className="inline-flex h-11 items-center rounded-md px-1" aria-label="Tenantry home">
          <Logo />
        </Link>
        <ThemeToggle initial={theme} />
      </header>
      <main
        id="main"
        tabIndex={-1}
        className="flex flex-1 items-start justify-center px-4 pt-8 pb-16 outline-none sm:pt-16"
      >
        <div className="w-full max-w-sm">{children}</div>
      </main>
    </div>
  );
}
