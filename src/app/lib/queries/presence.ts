// In charge of naming the people a workspace page sees present (realtime presence keys are user
// ids, chosen by each browser): only members of the workspace are named, with the name and
// picture the viewer may see, so a presence entry can never put a stranger's name or an
// arbitrary image address on someone else's page.
import { asUser } from '@/app/lib/db';
import { APP_BUCKETS, readableUrls } from '@/app/lib/files';
import type { SignedIn } from '@/app/lib/session';

export interface Viewer {
  id: string;
  name: string;
  avatarUrl: string | null;
}

/** The members of the workspace among `ids`, in the order asked; others are left out. */
export async function viewersIn(
  user: SignedIn,
  workspaceId: string,
  ids: readonly string[],
): Promise<Viewer[]> {
  if (ids.length === 0) return [];
  const rows = await asUser(user, async (tx) => {
    const r = await tx.query<{
      id: string;
      email: string;
      displayName: string | null;
      avatarPath: string | null;
      legacy: string | null;
    }>(
      `select m.user_id as id, p.email, p.display_name as "displayName", p.avatar_path as "avatarPath",
              p.avatar_url as legacy
       from public.workspace_members m join public.profiles p on p.id = m.user_id
       where m.workspace_id = $1 and m.user_id = any ($2::uuid[])`,
      [workspaceId, ids],
    );
    return r.rows;
  });
  const pictures = await readableUrls(
    user,
    APP_BUCKETS.avatars,
    rows.map((r) => r.avatarPath),
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    if (!r) return [];
    const avatarUrl = r.avatarPath ? (pictures.get(r.avatarPath) ?? null) : r.legacy;
    return [{ id, name: r.displayName || r.email, avatarUrl }];
  });
}
