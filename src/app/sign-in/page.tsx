// Sign-in page: e-mail and password, posted to a server action (works without client JavaScript).
// Someone already signed in goes on to where they were headed, or their workspaces. A passkey signs
// in without the password (the device asks for a fingerprint, face or PIN).
import Link from 'next/link';
import { redirect } from 'next/navigation';
import { PasskeySignInButton } from '@/app/components/passkey-buttons';
import { ProviderButtons } from '@/app/components/provider-buttons';
import { SignInForm } from '@/app/sign-in/sign-in-form';
import { localPath, safeNext } from '@/app/lib/redirect-target';
import { currentUser, halfSignedInUser, secondStepPath, services } from '@/app/lib/session';

export const metadata = { title: 'Sign in' };

export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { next: requested } = await searchParams;
  // Carried on only when it is a path of this app; the action checks it again.
  const next = localPath(typeof requested === 'string' ? requested : null);
  if (await currentUser()) redirect(safeNext(next));
  if (await halfSignedInUser()) redirect(secondStepPath(next));
  return (
    <>
      <div className="mb-8 text-center">
        <h1 className="text-2xl font-semibold tracking-tight">Sign in to Tenantry</h1>
        <p className="mt-2 text-sm text-muted-foreground">Welcome back. Enter your e-mail and password.</p>
      </div>
      <div className="rounded-lg border bg-card p-6 shadow-xs">
        <SignInForm next={next} />
        {services().identity.deps.passkeys.enabled ? (
          <div className="mt-4">
            <PasskeySignInButton next={next} />
          </div>
        ) : null}
        <ProviderButtons next={next} />
      </div>
      <p className="mt-6 text-center text-sm text-muted-foreground">
        New here?{' '}
        <Link
          className="font-medium text-foreground underline"
          href={next ? `/sign-up?next=${encodeURIComponent(next)}` : '/sign-up'}
        >
          Create an account
        </Link>
      </p>
      <p className="mt-2 text-center text-sm text-muted-foreground">
        <Link className="underline" href="/forgot-password">
          Forgot password?
        </Link>
        {' · '}
        <Link
          className="underline"
          href={next ? `/sign-in/email?next=${encodeURIComponent(next)}` : '/sign-in/email'}
        >
          E-mail me a sign-in link or code
        </Link>
        {services().identity.deps.phone.sender ? (
          <>
            {' · '}
            <Link
              className="underline"
              href={next ? `/sign-in/phone?next=${encodeURIComponent(next)}` : '/sign-in/phone'}
            >
              Text me a code
            </Link>
          </>
        ) : null}
      </p>
    </>
  );
}
