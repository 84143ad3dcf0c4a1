// The root layout of the web application: the document in the person's colour theme, the skip
// link, base styles, and where toasts appear. Headers and navigation come from the layouts below
// (components/app-shell.tsx for the app, components/auth-shell.tsx for signing in).
import type { Metadata, Viewport } from 'next';
import type { ReactNode } from 'react';
import { Flash } from '@/app/components/flash';
import { Toaster } from '@/app/components/ui/toaster';
import { chosenTheme } from '@/app/lib/theme';
import './globals.css';

// Every page shows who is signed in, so none is prerendered at build time.
export const dynamic = 'force-dynamic';

export const metadata: Metadata = {
  title: { default: 'Tenantry', template: '%s · Tenantry' },
  description: 'Workspaces, members, invitations, billing and digests for your SaaS.',
};

export const viewport: Viewport = {
  width: 'device-width',
  initialScale: 1,
  themeColor: [
    { media: '(prefers-color-scheme: light)', color: '#fafafa' },
    { media: '(prefers-color-scheme: dark)', color: '#09090b' },
  ],
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  const theme = await chosenTheme();
  return (
    <html lang="en" data-theme={theme === 'system' ? undefined : theme}>
      <body className="min-h-dvh bg-background text-foreground antialiased">
        <a
          href="#main"
          className="sr-only z-[60] rounded-md bg-primary px-4 py-2 text-sm font-medium text-primary-foreground focus:not-sr-only focus:fixed focus:top-3 focus:left-3"
        >
          Skip to content
        </a>
        {children}
        <Toaster />
        <Flash />
      </body>
    </html>
  );
}
