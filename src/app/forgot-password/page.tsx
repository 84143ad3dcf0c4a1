// Password help. This server does not send password-reset e-mails yet, so the page says what to
// do instead, rather than offering a form that would do nothing.
import { KeyRound } from 'lucide-react';
import Link from 'next/link';
import { Button } from '@/app/components/ui/button';

export const metadata = { title: 'Forgot password' };

export default function ForgotPasswordPage() {
  return (
    <div className="rounded-lg border bg-card p-6 text-center shadow-xs">
      <span className="mx-auto mb-4 inline-flex size-10 items-center justify-center rounded-full bg-muted">
        <KeyRound className="size-5 text-muted-foreground" aria-hidden="true" />
      </span>
      <h1 className="text-xl font-semibold tracking-tight">Forgot your password?</h1>
      <p className="mt-2 text-sm text-muted-foreground">
        Resetting a password by e-mail is not available on this server yet. Ask the person who runs it to set
        a new password for you; once you are signed in you can change it on your profile.
      </p>
      <Button asChild variant="outline" className="mt-6 w-full">
        <Link href="/sign-in">Back to sign in</Link>
      </Button>
    </div>
  );
}
