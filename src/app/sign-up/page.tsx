// Sign-up page: e-mail and password, posted to a server action (works without client JavaScript).
import Link from 'next/link';
import { signUpAction } from '@/app/actions/auth';
import { Flash } from '@/app/components/flash';
import { localPath } from '@/app/lib/redirect-target';

export const metadata = { title: 'Create an account' };

export default async function SignUpPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | undefined>>;
}) {
  const { next: requested } = await searchParams;
  // Carried on only when it is a path of this app; the action checks it again.
  const next = localPath(requested);
  return (
    <section className="card" style={{ maxWidth: '28rem' }}>
      <h1>Create an account</h1>
      <Flash />
      <form action={signUpAction} className="stack">
        <input type="hidden" name="next" value={next ?? ''} />
        <label>
          E-mail
          <input name="email" type="email" autoComplete="email" required />
        </label>
        <label>
          Password <span className="muted">(at least 8 characters)</span>
          <input name="password" type="password" autoComplete="new-password" minLength={8} required />
        </label>
        <button type="submit" className="button">
          Create account
        </button>
      </form>
      <p className="muted">
        Already have an account? <Link href="/sign-in">Sign in</Link>
      </p>
    </section>
  );
}
