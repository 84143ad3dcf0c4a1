// Signing in with a phone: a code texted to the number, typed back here. Only when phone sign-in
// is on (an SMS provider, or the development outbox); never creates an account.
import Link from 'next/link';
import { notFound, redirect } from 'next/navigation';
import { PhoneSignInForm } from '@/app/sign-in/phone/phone-sign-in-form';
import { localPath, safeNext } from '@/app/lib/redirect-target';
import { currentUser, services } from '@/app/lib/session';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Sign in with your phone' };

export default async function PhoneSignInPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  if (!services().identity.deps.phone.sender) notFound();
  const { next: requested } = await searchParams;
  const next = localPath(typeof requested === 'string' ? requested : null);
  if (await currentUser()) redirect(safeNext(next));
  return (
    <>
      <div className="mb-8 text-center">
        <h1 className="text-2xl font-semibold tracking-tight">Sign in with your phone</h1>
        <p className="mt-2 text-sm text-muted-foreground">We will text you a sign-in code.</p>
      </div>
      <div className="rounded-lg border bg-card p-6 shadow-xs">
        <PhoneSignInForm next={next} />
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
