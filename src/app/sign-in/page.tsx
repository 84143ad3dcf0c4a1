// Sign-in page: e-mail and password, posted to a server action (works without client JavaScript).
import Link from 'next/link';
import { signInAction } from '@/app/actions/auth';
import { Flash } from '@/app/components/flash';
import { localPath } from '@/app/lib/redirect-target';

export const metadata = { title: 'Sign in' };

export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | undefined>>;
}) {
  const { next: requested } = await searchParams;
  // Carried on only when it is a path of this app; the action checks it again.
  const next = localPath(requested);
  return (
    <section className="card" style={{ maxWidth: '28rem' }}>
      <h1>Sign in</h1>
      <Flash />
      <form action={signInAction} className="stack">
        <input type="hidden" name="next" value={next ?? ''} />
        <label>
          E-mail
          <input name="email" type="email" autoComplete="email" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        <button type="submit" className="button">
          Sign in
        </button>
      </form>
      <p className="muted">
        New here?{' '}
        <Link href={next ? `/sign-up?next=${encodeURIComponent(next)}` : '/sign-up'}>Create an account</Link>
      </p>
    </section>
  );
}
