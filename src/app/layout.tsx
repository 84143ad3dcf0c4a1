// The root layout of the web application: document shell, site header and base styles.
import type { Metadata } from 'next';
import Link from 'next/link';
import type { ReactNode } from 'react';
import { signOutAction } from '@/app/actions/auth';
import { currentUser } from '@/app/lib/session';
import './globals.css';

// Every page shows who is signed in, so none is prerendered at build time.
export const dynamic = 'force-dynamic';

export const metadata: Metadata = {
  title: { default: 'Tenantry', template: '%s · Tenantry' },
  description: 'Workspaces, members, invitations, billing and digests for your SaaS.',
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  const user = await currentUser().catch(() => null);
  return (
    <html lang="en">
      <body>
        <header className="site">
          <Link href="/" className="brand">
            Tenantry
          </Link>
          <nav aria-label="Account">
            {user ? (
              <form action={signOutAction}>
                <Link href="/workspaces">Workspaces</Link> <Link href="/settings/profile">Profile</Link>{' '}
                <Link href="/settings/notifications">Notifications</Link>{' '}
                <button type="submit" className="link-button">
                  Sign out
                </button>
              </form>
            ) : (
              <Link href="/sign-in">Sign in</Link>
            )}
          </nav>
        </header>
        <main>{children}</main>
      </body>
    </html>
  );
}
