// In charge of page titles for a workspace's pages: "Members · Lovelace Labs" (the root layout
// adds " · Tenantry"). Reads the workspace the page reads (cached per request); reveals nothing
// for an address that is not the user's workspace.
import type { Metadata } from 'next';
import { workspaceBySlug } from '@/app/lib/queries/workspaces';
import { currentUser } from '@/app/lib/session';

export async function workspaceTitle(params: Promise<{ slug: string }>, page?: string): Promise<Metadata> {
  const { slug } = await params;
  const user = await currentUser();
  const workspace = user && /^[a-z0-9-]{1,48}$/.test(slug) ? await workspaceBySlug(user, slug) : null;
  if (!workspace) return { title: page ?? 'Workspace' };
  return { title: page ? `${page} · ${workspace.name}` : workspace.name };
}
