// In charge of letting only staff into the operator console (decision 0096), for every page,
// route and server action under /admin: nobody signed in and anyone not staff gets the page that
// does not exist (404, revealing nothing); staff whose session has not passed their second factor
// are sent to the two-step page and come back; staff without any second factor are sent to set one
// up. The session itself is checked in the database (aal2, still standing), not only its token.
import { notFound, redirect } from 'next/navigation';
import { requestContext } from '@/app/lib/client';
import { flash } from '@/app/lib/flash';
import { secondStepPath, sessionAtAnyStep, type SignedIn } from '@/app/lib/session';
import { operatorStands, type Operator } from '@/server/operator/actions';
import { isStaff } from '@/server/operator/staff';
import { getRuntime } from '@/server/runtime';

export interface StaffSession {
  user: SignedIn;
  operator: Operator;
}

/** Where staff without any second factor set one up. */
const SET_UP_FACTOR = '/settings/security';

async function staffSession(path: string, forAction: boolean): Promise<StaffSession> {
  const found = await sessionAtAnyStep();
  if (!found) notFound();
  const user = 'secondStepDue' in found ? found.user : found;
  const { pool } = getRuntime();
  if (!(await isStaff(pool, user.userId))) notFound();
  if ('secondStepDue' in found || !user.aal2) {
    if (forAction) await flash('error', 'Confirm your second factor before acting in the console');
    redirect('secondStepDue' in found ? secondStepPath(path) : SET_UP_FACTOR);
  }
  const operator: Operator = {
    userId: user.userId,
    sessionId: user.token.session_id,
    context: await requestContext(),
  };
  // A token at aal2 whose session ended or was lowered since: no way in.
  if (!(await operatorStands(pool, operator))) notFound();
  return { user, operator };
}

/** For console pages and routes: staff with a second-factor session, else 404 or a step-up. */
export function requireOperator(path: string): Promise<StaffSession> {
  return staffSession(path, false);
}

/** For console server actions: the same check again, whatever page offered the button. */
export function requireOperatorAction(back: string): Promise<StaffSession> {
  return staffSession(back, true);
}

/**
 * For the console's layout, which does not know the page's address: 404 for anyone not staff,
 * the staff session when it may act, else null (the page itself sends the visitor to step up and
 * back to where they were).
 */
export async function operatorForLayout(): Promise<SignedIn | null> {
  const found = await sessionAtAnyStep();
  if (!found) notFound();
  const user = 'secondStepDue' in found ? found.user : found;
  const { pool } = getRuntime();
  if (!(await isStaff(pool, user.userId))) notFound();
  if ('secondStepDue' in found || !user.aal2) return null;
  return (await operatorStands(pool, { userId: user.userId, sessionId: user.token.session_id }))
    ? user
    : null;
}
