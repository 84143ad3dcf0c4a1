// In charge of running database work for pages and server actions as the signed-in user, under
// row-level security, and of turning database refusals into messages a person can act on.
import { auditSettings } from '@/app/lib/audit-context';
import { withRls, type Tx } from '@/server/db/transactions';
import { getRuntime } from '@/server/runtime';
import { notFound, redirect } from 'next/navigation';
import { requireUser, type SignedIn } from '@/app/lib/session';
import { slugParam } from '@/app/lib/slug-param';
import {
  lockedWorkspace,
  renamedSlug,
  workspaceBySlug,
  type WorkspaceAccess,
} from '@/app/lib/queries/workspaces';

export async function asUser<T>(user: SignedIn, fn: (tx: Tx) => Promise<T>): Promise<T> {
  // The request's address and user agent ride along for the audit log's workspace triggers.
  return withRls(getRuntime().pool, user.claims, fn, { settings: await auditSettings() });
}

const GENERIC = 'Something went wrong; nothing was changed. Try again.';

/**
 * A refusal from the database, phrased for the page (permission failures say so, never crash).
 * Only sentences this service wrote itself (raised by its functions and triggers) are shown;
 * PostgreSQL's own wording ("permission denied for table …", "violates check constraint …")
 * names internals and becomes a plain sentence instead.
 */
export function refusalMessage(error: unknown): string {
  const e = error as { code?: string; message?: string; detail?: string };
  const message = e.message ?? '';
  const postgresWording =
    /^(permission denied|new row violates|duplicate key value|null value in column|value too long|invalid input syntax|.*violates (check|foreign key|unique|not-null) constraint)/i;
  if (e.code === '42501') {
    if (!message || postgresWording.test(message)) return 'Not allowed: your role does not permit this';
    return `Not allowed: ${message}`;
  }
  if (e.code === 'PT404') return 'Not found, or you do not have access to it';
  if (e.code === 'PGRST') return customRefusal(e.message, e.detail) ?? GENERIC;
  if (e.code === '23505' && postgresWording.test(message)) return 'That name is already taken';
  if (typeof e.code === 'string' && /^(PT4\d\d|22|23|P0001)/.test(e.code) && message) {
    return postgresWording.test(message) ? 'That value is not accepted; check what you entered' : message;
  }
  return GENERIC;
}

/**
 * A function's own PostgREST error (`raise sqlstate 'PGRST'`, e.g. a 429): its message when a
 * 4xx, followed by its hint when it has one (what the person can do about it).
 */
function customRefusal(message = '', detail = ''): string | null {
  try {
    const body = JSON.parse(message) as { message?: unknown; hint?: unknown };
    const { status } = JSON.parse(detail) as { status?: unknown };
    const refusal = typeof status === 'number' && status >= 400 && status < 500;
    if (!refusal || typeof body.message !== 'string') return null;
    return typeof body.hint === 'string' && body.hint ? `${body.message}. ${body.hint}.` : body.message;
  } catch {
    return null;
  }
}

export type { WorkspaceAccess };

/**
 * For a workspace page: the signed-in user (else a redirect to sign in) and the workspace named by
 * the URL. A workspace's old address (before a rename) leads to its current one, for its members;
 * otherwise the page does not exist (never revealing whether the workspace does).
 */
export async function requireWorkspace(
  params: Promise<{ slug: string }>,
  tab = '',
): Promise<{ user: SignedIn; workspace: WorkspaceAccess }> {
  const slug = await slugParam(params);
  if (!slug) notFound();
  const user = await requireUser(`/w/${slug}${tab}`);
  const workspace = await workspaceBySlug(user, slug);
  if (workspace) return { user, workspace };
  const current = await renamedSlug(user, slug);
  if (current) redirect(`/w/${current}${tab}`);
  // A workspace that requires two-step verification this session has not passed: say so.
  if (await lockedWorkspace(user, slug)) redirect(`/two-step-required/${slug}`);
  notFound();
}
