// In charge of who may open the development mailbox. It lists every tenant's e-mails, invitation
// links included, to anyone who can load it, so it exists only in local mode and only for someone
// on this machine: the connection must come from loopback, and so must the client address a
// trusted proxy reports, if any. Headers a client sets itself count for nothing.
import type { Mode } from '@/server/config';
import { isLoopback, type ConnectedClient } from '@/server/web-session/client-address';

export function mailboxAllowed(mode: Mode, connected: ConnectedClient): boolean {
  return mode === 'local' && isLoopback(connected.socket) && isLoopback(connected.client);
}
