// In charge of the identity API's lines in the security audit log (public.audit_events, decision
// 0089): sign-ins and their failures (refused codes and links too), sign-outs, factors, passwords,
// addresses, sessions, passkeys and an administrator's changes to an account, each written with the statement or transaction that makes the change. Action names are
// GoTrue's (internal/models/audit_log_entry.go), so auth.audit_log_entries reads as GoTrue's does.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Queryable } from '../db/pool.js';
import type { SessionContext } from './sessions.js';

export type AccountAction =
  | 'login'
  | 'login_failed'
  | 'logout'
  | 'token_revoked'
  | 'user_updated_password'
  | 'user_modified'
  | 'user_recovery_requested'
  | 'user_deleted'
  | 'factor_in_progress'
  | 'factor_unenrolled'
  | 'factor_deleted'
  | 'verification_attempted'
  | 'passkey_created'
  | 'passkey_deleted'
  | 'oauth_client_created'
  | 'oauth_client_updated'
  | 'oauth_client_deleted'
  | 'oauth_client_secret_regenerated'
  | 'oauth_authorization_approved'
  | 'oauth_authorization_denied'
  | 'oauth_token_issued'
  | 'oauth_code_reused'
  | 'oauth_grant_revoked';

export interface AccountEvent {
  action: AccountAction;
  /** the account the event is about */
  userId: string | null;
  /** who acted: the account itself unless said otherwise (an operator's key, nobody yet) */
  actor?: { type: 'user'; id: string } | { type: 'service' | 'anonymous' | 'system' };
  target?: { type: string; id: string };
  /** facts for the reader (a factor's type, a sign-in's method); never a secret */
  details?: Record<string, unknown>;
  /** where the request came from; the current request's when left out */
  context?: SessionContext;
}

// Shared through globalThis: the identity routes and the separately bundled web pages (whose
// server actions call the identity service) must use one store.
const STORE_KEY = Symbol.for('tenantry.audit-request');

/**
 * The request being served, for flows that are not handed its address and user agent: the identity
 * routes and the web app's calls into the identity service run inside it.
 */
export const auditRequest: AsyncLocalStorage<SessionContext> = ((
  globalThis as Record<symbol, AsyncLocalStorage<SessionContext> | undefined>
)[STORE_KEY] ??= new AsyncLocalStorage<SessionContext>());

/** The INSERT for one line; for flows that add it to a statement of their own. */
export function auditInsert(event: AccountEvent, firstParameter = 1): { text: string; values: unknown[] } {
  const context = event.context ?? auditRequest.getStore() ?? { ip: null, userAgent: null };
  const actor =
    event.actor ??
    (event.userId ? { type: 'user' as const, id: event.userId } : { type: 'anonymous' as const });
  const p = (n: number) => `$${firstParameter + n}`;
  return {
    text: `insert into public.audit_events (actor_id, actor_type, user_id, action, target_type, target_id,
        ip_address, user_agent, details)
      values (${p(0)}::uuid, ${p(1)}, ${p(2)}::uuid, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}::inet, ${p(7)}, ${p(8)}::jsonb)`,
    values: [
      actor.type === 'user' ? actor.id : null,
      actor.type,
      event.userId,
      event.action,
      event.target?.type ?? null,
      event.target?.id ?? null,
      context.ip,
      context.userAgent?.slice(0, 512) ?? null,
      JSON.stringify(event.details ?? {}),
    ],
  };
}

/** Writes one line with `db` (a transaction to be part of its change, or the pool on its own). */
export async function recordAccountEvent(db: Queryable, event: AccountEvent): Promise<void> {
  const { text, values } = auditInsert(event);
  // prepared: one text for every line, parsed and planned once per connection
  await db.query({ name: 'audit.record', text, values });
}
