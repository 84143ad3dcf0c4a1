// Sign-up page: e-mail and password, posted to a server action (works without client JavaScript).
// An invitation link pre-fills the invited e-mail; someone already signed in goes on.
import Link from 'next/link';
import { redirect } from 'next/navigation';
import { ProviderButtons } from '@/app/components/provider-buttons';
import { SignUpForm } from '@/app/sign-up/sign-up-form';
import { localPath, safeNext } from '@/app/lib/redirect-target';
import { currentUser } from '@/app/lib/session';
import { getRuntime } from '@/server/runtime';

export const metadata = { title: 'Create an account' };

export default async function SignUpPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { next: requested, email } = await searchParams;
  // Carried on only when it is a path of this app; the action checks it again.
  const next = localPath(typeof requested === 'string' ? requested : null);
  if (await currentUser()) redirect(safeNext(next));
  const prefill = typeof email === 'string' && email.length <= 320 ? email : '';
  return (
    <>
      <div className="mb-8 text-center">
        <h1 className="text-2xl font-semibold tracking-tight">Create your account</h1>
        <p className="mt-2 text-sm text-muted-foreground">Workspaces for your team, ready in a minute.</p>
      </div>
      <div className="rounded-lg border bg-card p-6 shadow-xs">
        <SignUpForm next={next} email={prefill} minLength={getRuntime().config.minPasswordLength} />
        <ProviderButtons next={next} />
      </div>
      <p className="mt-6 text-center text-sm text-muted-foreground">
        Already have an account?{' '}
        <Link
          className="font-medium text-foreground underline"
          href={next ? `/sign-in?next=${encodeURIComponent(next)}` : '/sign-in'}
        >
          Sign in
        </Link>
      </p>
    </>
  );
}
