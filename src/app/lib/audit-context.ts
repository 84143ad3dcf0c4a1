// In charge of handing the request's client address and user agent to the security audit log
// (decision 0089) from pages and server actions: as transaction settings for database work under
// row-level security (the workspace triggers read them), and as the identity service's request
// for account changes made from the web app.
import { requestContext } from '@/app/lib/client';
import { auditRequest } from '@/server/identity/audit';
import type { IdentityService } from '@/server/identity/service';

/** The identity service's account changes the web app makes; each records its request. */
const ACCOUNT_CHANGES = new Set<string>([
  'endOwnSession',
  'signOut',
  'updateCurrentUser',
  'recover',
  'enrollFactor',
  'verifyFactor',
  'unenrollFactor',
  'verifyRecoveryCode',
  'passkeyRegistrationFinish',
  'deletePasskey',
]);

/** The request's address and user agent; none outside a request (a script, a test). */
async function currentRequest(): Promise<{ ip: string | null; userAgent: string | null } | null> {
  try {
    return await requestContext();
  } catch {
    return null;
  }
}

/** tenantry.client_address and tenantry.user_agent for a transaction of this request. */
export async function auditSettings(): Promise<[string, string][]> {
  const request = await currentRequest();
  if (!request) return [];
  return [
    ['tenantry.client_address', request.ip ?? ''],
    ['tenantry.user_agent', request.userAgent ?? ''],
  ];
}

/** The identity service, its account changes run within this request (for their audit lines). */
export function auditedIdentity(identity: IdentityService): IdentityService {
  return new Proxy(identity, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof name !== 'string' || !ACCOUNT_CHANGES.has(name) || typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const call = () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        const request = await currentRequest();
        return request ? auditRequest.run(request, call) : call();
      };
    },
  });
}
