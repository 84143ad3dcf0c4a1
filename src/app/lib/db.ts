// In charge of running database work for pages and server actions as the signed-in user, under
// row-level security, and of turning database refusals into messages a person can act on.
import { withRls, type Tx } from '@/server/db/transactions';
import { getRuntime } from '@/server/runtime';
import { notFound } from 'next/navigation';
import { requireUser, type SignedIn } from '@/app/lib/session';

export function asUser<T>(user: SignedIn, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return withRls(getRuntime().pool, user.claims, fn);
}

/** A refusal from the database, phrased for the page (permission failures say so, never crash). */
export function refusalMessage(error: unknown): string {
  const e = error as { code?: string; message?: string; detail?: string };
  if (e.code === '42501') return `Not allowed: ${e.message ?? 'your role does not permit this'}`;
  if (e.code === 'PT404') return 'Not found, or you do not have access to it';
  if (e.code === 'PGRST')
    return customRefusal(e.message, e.detail) ?? 'Something went wrong; nothing was changed. Try again.';
  if (typeof e.code === 'string' && /^(PT4\d\d|22|23|P0001)/.test(e.code) && e.message) return e.message;
  return 'Something went wrong; nothing was changed. Try again.';
}

/** A function's own PostgREST error (`raise sqlstate 'PGRST'`, e.g. a 429): its message when a 4xx. */
function customRefusal(message = '', detail = ''): string | null {
  try {
    const body = JSON.parse(message) as { message?: unknown };
    const { status } = JSON.parse(detail) as { status?: unknown };
    const refusal = typeof status === 'number' && status >= 400 && status < 500;
    return refusal && typeof body.message === 'string' ? body.message : null;
  } catch {
    return null;
  }
}

export interface WorkspaceAccess {
  id: string;
  name: string;
  slug: string;
  role: 'owner' | 'admin' | 'member' | 'viewer';
  /** the last payment failed and is still unpaid */
  pastDue: boolean;
}

/** The workspace with this slug if the user belongs to it; null otherwise (never revealing which). */
export async function workspaceBySlug(user: SignedIn, slug: string): Promise<WorkspaceAccess | null> {
  return asUser(user, async (tx) => {
    const r = await tx.query<WorkspaceAccess>(
      `select w.id, w.name, w.slug, m.role, coalesce(s.past_due_since is not null, false) as "pastDue"
       from public.workspaces w
       join public.workspace_members m on m.workspace_id = w.id and m.user_id = auth.uid()
       left join public.subscriptions s on s.workspace_id = w.id
       where w.slug = $1`,
      [slug],
    );
    return r.rows[0] ?? null;
  });
}

/**
 * For a workspace page: the signed-in user (else a redirect to sign in) and the workspace named by
 * the URL, or the not-found page when it does not exist or the user is not in it.
 */
export async function requireWorkspace(
  params: Promise<{ slug: string }>,
  tab = '',
): Promise<{ user: SignedIn; workspace: WorkspaceAccess }> {
  const { slug } = await params;
  const user = await requireUser(`/w/${slug}${tab}`);
  const workspace = await workspaceBySlug(user, slug);
  if (!workspace) notFound();
  return { user, workspace };
}
