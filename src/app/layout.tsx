// The root layout of the web application: document shell, site header and base styles.
import type { Metadata } from 'next';
import Link from 'next/link';
import type { ReactNode } from 'react';
import './globals.css';

export const metadata: Metadata = {
  title: { default: 'Tenantry', template: '%s · Tenantry' },
  description: 'Workspaces, members, invitations, billing and digests for your SaaS.',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <header className="site">
          <Link href="/" className="brand">
            Tenantry
          </Link>
          <nav aria-label="Account">
            <Link href="/sign-in">Sign in</Link>
          </nav>
        </header>
        <main>{children}</main>
      </body>
    </html>
  );
}
