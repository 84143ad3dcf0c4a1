// Signing in without a password: the e-mail gets a sign-in link and a 6-digit code; the link
// comes back signed in (in this browser), the code is typed here. Addresses without an account get
// nothing, and the page answers them the same way; this never creates an account.
import Link from 'next/link';
import { redirect } from 'next/navigation';
import { EmailSignInForm } from '@/app/sign-in/email/email-sign-in-form';
import { localPath, safeNext } from '@/app/lib/redirect-target';
import { currentUser } from '@/app/lib/session';

export const metadata = { title: 'Sign in with e-mail' };

export default async function EmailSignInPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { next: requested } = await searchParams;
  const next = localPath(typeof requested === 'string' ? requested : null);
  if (await currentUser()) redirect(safeNext(next));
  return (
    <>
      <div className="mb-8 text-center">
        <h1 className="text-2xl font-semibold tracking-tight">Sign in with e-mail</h1>
        <p className="mt-2 text-sm text-muted-foreground">We will e-mail you a sign-in link and a code.</p>
      </div>
      <div className="rounded-lg border bg-card p-6 shadow-xs">
        <EmailSignInForm next={next} />
      </div>
      <p className="mt-6 text-center text-sm text-muted-foreground">
        <Link
          className="font-medium text-foreground underline"
          href={next ? `/sign-in?next=${encodeURIComponent(next)}` : '/sign-in'}
        >
          Sign in with a password instead
        </Link>
      </p>
    </>
  );
}
