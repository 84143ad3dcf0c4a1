// The second step of signing in, for people who set up two-step verification: a code from their
// authenticator app, or one of their recovery codes. Only a session that still owes the step
// sees it; anyone else goes on (or to sign in). Whoever set up a security key uses it instead of
// the app's code (or a recovery code if the key is lost).
import { redirect } from 'next/navigation';
import { signOutAction } from '@/app/actions/auth';
import { SecurityKeyStepButton } from '@/app/components/passkey-buttons';
import { PhoneStepForm } from '@/app/sign-in/two-step/phone-step-form';
import { SecondStepForm } from '@/app/sign-in/two-step/second-step-form';
import { localPath, safeNext } from '@/app/lib/redirect-target';
import { currentUser, halfSignedInUser, services } from '@/app/lib/session';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Two-step verification' };

export default async function SecondStepPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { next: requested } = await searchParams;
  const next = localPath(typeof requested === 'string' ? requested : null);
  const user = await halfSignedInUser();
  if (!user) redirect((await currentUser()) ? safeNext(next) : '/sign-in');
  const { factors } = await services().identity.factorsOf(user.userId);
  const usesKey = factors.some((f) => f.status === 'verified' && f.factor_type === 'webauthn');
  const usesPhone = factors.some((f) => f.status === 'verified' && f.factor_type === 'phone');
  return (
    <>
      <div className="mb-8 text-center">
        <h1 className="text-2xl font-semibold tracking-tight">Two-step verification</h1>
        <p className="mt-2 text-sm text-muted-foreground">
          Signed in as {user.email}.{' '}
          {usesKey
            ? 'Use your security key to continue.'
            : usesPhone
              ? 'We text a code to your phone to continue.'
              : 'Enter the code from your authenticator app to continue.'}
        </p>
      </div>
      <div className="rounded-lg border bg-card p-6 shadow-xs">
        {usesPhone ? (
          <div className="grid gap-6">
            <PhoneStepForm next={next} />
            <div className="border-t pt-4">
              <p className="mb-3 text-sm text-muted-foreground">
                No access to your phone? Use one of your recovery codes.
              </p>
              <SecondStepForm next={next} recoveryOnly />
            </div>
          </div>
        ) : usesKey ? (
          <div className="grid gap-6">
            <SecurityKeyStepButton next={next} />
            <div className="border-t pt-4">
              <p className="mb-3 text-sm text-muted-foreground">
                Lost your key? Use one of your recovery codes.
              </p>
              <SecondStepForm next={next} recoveryOnly />
            </div>
          </div>
        ) : (
          <SecondStepForm next={next} />
        )}
      </div>
      <form action={signOutAction} className="mt-6 text-center text-sm text-muted-foreground">
        Not you, or no way to get a code?{' '}
        <button type="submit" className="cursor-pointer font-medium text-foreground underline">
          Sign out
        </button>
      </form>
    </>
  );
}
