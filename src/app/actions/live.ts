'use server';
// Server actions behind a workspace page's live updates (decision 0082): the short-lived access
// token the page's realtime connection presents (the session itself stays in its HttpOnly
// cookies), the names and pictures of the members present, and sending away a page whose viewer
// is no longer a member.
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { requestContext } from '@/app/lib/client';
import { asUser } from '@/app/lib/db';
import { flash, readFlash } from '@/app/lib/flash';
import { viewersIn, type Viewer } from '@/app/lib/queries/presence';
import {
  currentUser,
  readStoredSession,
  requireUser,
  safeNext,
  services,
  storeSession,
  type SignedIn,
} from '@/app/lib/session';
import { verifyAccessToken } from '@/server/identity/access-tokens';
import { liveToken } from '@/server/web-session/live-token';

export type LiveAccess =
  { ok: true; token: string; expiresAt: number } | { ok: false; reason: 'signed-out' | 'not-member' };

const workspaceId = z.uuid();
/** presence keys asked about at once; a page shows a handful of faces and a count */
const MAX_VIEWERS_ASKED = 50;

/**
 * The signed-in user, renewing the session when its token is about to lapse: a page left open
 * keeps its session as supabase-js would in a browser. A server action is a POST from the app's
 * own pages (Next.js compares Origin and Host), as a renewal must be (decision 0051).
 */
async function liveUser(): Promise<SignedIn | null> {
  const user = await currentUser();
  if (user) return user;
  const stored = await readStoredSession();
  if (!stored) return null;
  const { identity, signer } = services();
  try {
    const fresh = await identity.refreshGrant(stored.refresh_token, await requestContext());
    await storeSession(fresh);
    const claims = await verifyAccessToken(signer, fresh.access_token);
    if ((await identity.sessionStanding(claims)) !== 'active') return null;
    return {
      userId: claims.sub,
      email: claims.email,
      token: claims,
      claims: claims as unknown as SignedIn['claims'],
      aal2: claims.aal === 'aal2',
    };
  } catch {
    return null;
  }
}

/** Whether the user may reach the workspace now (membership, standing, two-step lock: row-level security decides). */
async function isMember(user: SignedIn, id: string): Promise<boolean> {
  return asUser(user, async (tx) => {
    const r = await tx.query('select 1 from public.workspaces where id = $1', [id]);
    return r.rows.length > 0;
  });
}

/** A live token for a page of workspace `id`, or why there is none. */
export async function liveAccessAction(id: string): Promise<LiveAccess> {
  const input = workspaceId.safeParse(id);
  const user = await liveUser();
  if (!user) return { ok: false, reason: 'signed-out' };
  if (!input.success || !(await isMember(user, input.data))) return { ok: false, reason: 'not-member' };
  const { signer, config } = services();
  const live = await liveToken(signer, user.token, config.appLiveTokenSeconds);
  if (!live) return { ok: false, reason: 'signed-out' };
  return { ok: true, token: live.token, expiresAt: live.expiresAt };
}

/** Names and pictures of the members among the presence keys a page sees; null when signed out. */
export async function liveViewersAction(id: string, ids: string[]): Promise<Viewer[] | null> {
  const input = z
    .object({ id: workspaceId, ids: z.array(z.uuid()).max(MAX_VIEWERS_ASKED) })
    .safeParse({ id, ids });
  const user = await liveUser();
  if (!user) return null;
  if (!input.success) return [];
  return viewersIn(user, input.data.id, input.data.ids);
}

/**
 * Called when a page's live connection says the viewer may have lost the workspace: stays
 * (answers true) while they are a member; otherwise sends them to their workspaces with a
 * notice, or to sign in when the session is over.
 */
export async function checkLiveMembershipAction(id: string, path: string): Promise<boolean> {
  const back = safeNext(path);
  const user = await requireUser(back);
  const input = workspaceId.safeParse(id);
  if (input.success && (await isMember(user, input.data))) return true;
  // Leaving by oneself also ends the membership: the leave action's own words ("You left the
  // workspace"), already waiting for the next page, are the ones to keep.
  if (!(await readFlash())) await flash('notice', 'You are no longer a member of that workspace');
  redirect('/workspaces');
}
