// In charge of page titles for a workspace's pages: "Members · Lovelace Labs" (the root layout
// adds " · Tenantry"). Reads the workspace the page reads (cached per request); reveals nothing
// for an address that is not the user's workspace.
import type { Metadata } from 'next';
import { workspaceBySlug } from '@/app/lib/queries/workspaces';
import { currentUser } from '@/app/lib/session';
import { slugParam } from '@/app/lib/slug-param';

export async function workspaceTitle(params: Promise<{ slug: string }>, page?: string): Promise<Metadata> {
  const slug = await slugParam(params);
  const user = await currentUser();
  const workspace = user && slug ? await workspaceBySlug(user, slug) : null;
  if (!workspace) return { title: page ?? 'Workspace' };
  return { title: page ? `${page} · ${workspace.name}` : workspace.name };
}
