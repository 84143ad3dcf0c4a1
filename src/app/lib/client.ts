// In charge of who is connected, for pages and server actions: read from the stamp the process's
// HTTP server puts on every web request (never from headers a client can set itself).
import { headers } from 'next/headers';
import {
  CLIENT_ADDRESS_HEADER,
  readClientStamp,
  type ConnectedClient,
} from '@/server/web-session/client-address';

export async function connectedClient(): Promise<ConnectedClient> {
  const h = await headers();
  return readClientStamp(h.get(CLIENT_ADDRESS_HEADER)) ?? { client: null, socket: null };
}

/** What the identity service records about a sign-in or sign-up, and keys its limits with. */
export async function requestContext(): Promise<{ ip: string | null; userAgent: string | null }> {
  const h = await headers();
  const { client } = await connectedClient();
  return { ip: client, userAgent: h.get('user-agent')?.slice(0, 512) ?? null };
}
