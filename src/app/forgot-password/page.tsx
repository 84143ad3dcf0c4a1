// Password help: the e-mail address goes to the identity service, which e-mails a reset link if
// the address has an account. The page says the same thing either way, so it tells nobody who is
// registered. The link comes back through /auth/confirm to /reset-password, signed in; the e-mail's
// code, typed on the page the request leaves, does the same from any browser.
import Link from 'next/link';
import { ForgotPasswordForm } from '@/app/forgot-password/forgot-password-form';

export const metadata = { title: 'Forgot password' };

export default async function ForgotPasswordPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  // A failed reset link comes back here with its address, so asking again is one click.
  const { email } = await searchParams;
  return (
    <>
      <div className="mb-8 text-center">
        <h1 className="text-2xl font-semibold tracking-tight">Forgot your password?</h1>
        <p className="mt-2 text-sm text-muted-foreground">
          Enter your e-mail and we will send you a link to set a new one.
        </p>
      </div>
      <div className="rounded-lg border bg-card p-6 shadow-xs">
        <ForgotPasswordForm email={typeof email === 'string' ? email.slice(0, 320) : null} />
      </div>
      <p className="mt-6 text-center text-sm text-muted-foreground">
        Remembered it?{' '}
        <Link className="font-medium text-foreground underline" href="/sign-in">
          Back to sign in
        </Link>
      </p>
    </>
  );
}
