// A full page for when something is not there or went wrong: a short headline, what to do next,
// and a way back. Used by not-found.tsx and the error pages; StatusMessage is its middle, which
// not-found.tsx shows inside the app's own header for someone signed in.
import type { ReactNode } from 'react';
import { Logo } from '@/app/components/logo';
import { cn } from '@/app/components/ui/cn';

interface Status {
  code: string;
  title: string;
  children: ReactNode;
  actions: ReactNode;
}

/** The headline, what happened and the ways on; `className` places it in its surroundings. */
export function StatusMessage({
  code,
  title,
  children,
  actions,
  className,
}: Status & { className?: string }) {
  return (
    <div className={cn('mx-auto max-w-md py-16 text-center sm:py-24', className)} data-status-page={code}>
      <p className="text-sm font-semibold text-primary">{code}</p>
      <h1 className="mt-2 text-2xl font-semibold tracking-tight sm:text-3xl">{title}</h1>
      <div className="mt-3 text-sm text-muted-foreground">{children}</div>
      <div className="mt-8 flex flex-col justify-center gap-3 sm:flex-row">{actions}</div>
    </div>
  );
}

export function StatusPage(status: Status) {
  return (
    <div className="flex min-h-dvh flex-col">
      <header className="mx-auto flex h-14 w-full max-w-6xl items-center px-4 sm:px-6">
        <a href="/" className="inline-flex h-11 items-center rounded-md px-1" aria-label="Tenantry home">
          <Logo />
        </a>
      </header>
      <main
        id="main"
        tabIndex={-1}
        className="flex flex-1 items-center justify-center px-4 pb-24 outline-none"
      >
        {/* Centred by the page itself: no padding of its own. */}
        <StatusMessage {...status} className="py-0 sm:py-0" />
      </main>
    </div>
  );
}
