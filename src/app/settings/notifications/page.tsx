// Notification preferences: how often the activity digest comes, and which workspaces it skips.
import { updateNotificationsAction } from '@/app/actions/settings';
import { asUser } from '@/app/lib/db';
import { requireUser } from '@/app/lib/session';
import { Flash } from '@/app/components/flash';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Notifications' };

export default async function NotificationsPage() {
  const user = await requireUser('/settings/notifications');
  const { prefs, workspaces } = await asUser(user, async (tx) => ({
    prefs: (
      await tx.query<{ digest_frequency: string; muted_workspace_ids: string[] }>(
        'select digest_frequency, muted_workspace_ids from public.notification_preferences where user_id = auth.uid()',
      )
    ).rows[0]!,
    workspaces: (
      await tx.query<{ id: string; name: string }>('select id, name from public.workspaces order by name')
    ).rows,
  }));
  return (
    <>
      <h1>Notifications</h1>
      <Flash />
      <form action={updateNotificationsAction} className="card stack">
        <fieldset>
          <legend>Activity digest</legend>
          {(['off', 'daily', 'weekly'] as const).map((f) => (
            <label key={f} className="choice">
              <input
                type="radio"
                name="digest_frequency"
                value={f}
                defaultChecked={prefs.digest_frequency === f}
              />{' '}
              {f}
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Leave these workspaces out of the digest</legend>
          {workspaces.length === 0 ? <p className="muted">You are in no workspace yet.</p> : null}
          {workspaces.map((w) => (
            <label key={w.id} className="choice">
              <input
                type="checkbox"
                name="muted"
                value={w.id}
                defaultChecked={prefs.muted_workspace_ids.includes(w.id)}
              />{' '}
              {w.name}
            </label>
          ))}
        </fieldset>
        <button type="submit" className="button">
          Save preferences
        </button>
      </form>
    </>
  );
}
