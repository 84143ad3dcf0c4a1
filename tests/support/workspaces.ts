// Test support for data-API suites: signed-in supabase-js clients and a workspace with members,
// built through the public API exactly as an application would.
import type { SupabaseClient } from '@supabase/supabase-js';
import { withService } from '../../src/server/db/transactions.js';
import type { TestServer } from './server.js';

export interface SignedIn {
  client: SupabaseClient;
  id: string;
  email: string;
  accessToken: string;
  refreshToken: string;
}

let counter = 0;

export async function signUp(server: TestServer, label = 'user'): Promise<SignedIn> {
  const client = server.client();
  const email = `${label}-${++counter}-${Date.now()}@example.com`;
  const { data, error } = await client.auth.signUp({ email, password: 'correct horse battery' });
  if (error || !data.session) throw new Error(`sign-up failed: ${error?.message}`);
  return {
    client,
    id: data.user!.id,
    email,
    accessToken: data.session.access_token,
    refreshToken: data.session.refresh_token,
  };
}

/** A workspace owned by `owner`, with the others added at the given roles (set up by the service). */
export async function workspace(
  server: TestServer,
  owner: SignedIn,
  name: string,
  members: [SignedIn, 'admin' | 'member' | 'viewer'][] = [],
): Promise<string> {
  const { data, error } = await owner.client.rpc('create_workspace', { name });
  if (error) throw new Error(`create_workspace failed: ${error.message}`);
  const id = (data as { id: string }).id;
  await withService(server.pool, async (tx) => {
    for (const [user, role] of members) {
      await tx.query(
        'insert into public.workspace_members (workspace_id, user_id, role) values ($1, $2, $3)',
        [id, user.id, role],
      );
    }
  });
  return id;
}
