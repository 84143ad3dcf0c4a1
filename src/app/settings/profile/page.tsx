// The signed-in user's profile (display name, avatar URL) and password.
import { changePasswordAction, updateProfileAction } from '@/app/actions/settings';
import { asUser } from '@/app/lib/db';
import { requireUser } from '@/app/lib/session';
import { Flash } from '@/app/components/flash';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Profile' };

export default async function ProfilePage() {
  const user = await requireUser('/settings/profile');
  const profile = await asUser(user, async (tx) => {
    const r = await tx.query<{ email: string; display_name: string | null; avatar_url: string | null }>(
      'select email, display_name, avatar_url from public.profiles where id = auth.uid()',
    );
    return r.rows[0]!;
  });
  return (
    <>
      <h1>Profile</h1>
      <Flash />
      <section className="card">
        <form action={updateProfileAction} className="stack">
          <p className="muted">E-mail: {profile.email}</p>
          <label>
            Display name
            <input name="display_name" defaultValue={profile.display_name ?? ''} maxLength={100} />
          </label>
          <label>
            Avatar URL
            <input name="avatar_url" type="url" defaultValue={profile.avatar_url ?? ''} />
          </label>
          <button type="submit" className="button">
            Save profile
          </button>
        </form>
      </section>
      <section className="card" aria-labelledby="password">
        <h2 id="password">Password</h2>
        <form action={changePasswordAction} className="stack">
          <label>
            New password
            <input name="password" type="password" autoComplete="new-password" minLength={8} required />
          </label>
          <button type="submit" className="button">
            Change password
          </button>
        </form>
      </section>
    </>
  );
}
