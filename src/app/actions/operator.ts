'use server';
// Server actions of the operator console (decision 0096): ban and unban an account, delete it,
// end one or all of its sessions, try a failed e-mail again. Each checks staff and the second
// factor again itself (a POST made without the page is judged the same: 404 for anyone not
// staff), validates its input, and leaves the outcome as a toast on the page it came from.
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { flash } from '@/app/lib/flash';
import { requireOperatorAction } from '@/app/lib/operator';
import {
  banUser,
  deleteUser,
  OperatorConflict,
  OperatorRefused,
  retryMail,
  revokeAllSessions,
  revokeSession,
  unbanUser,
  type Operator,
} from '@/server/operator/actions';
import { getRuntime } from '@/server/runtime';

const userId = z.string().uuid('That is not an account id');
/** The ban lengths the console offers, in hours. */
const BAN_HOURS = { '1h': 1, '24h': 24, '7d': 24 * 7, '30d': 24 * 30, forever: 24 * 365 * 100 } as const;

async function act(
  back: string,
  form: FormData,
  schema: z.ZodType<Record<string, string>>,
  work: (operator: Operator, input: Record<string, string>) => Promise<{ notice: string; to?: string }>,
): Promise<never> {
  const { operator } = await requireOperatorAction(back);
  const input = schema.safeParse(Object.fromEntries(form));
  if (!input.success) {
    await flash('error', input.error.issues[0]?.message ?? 'Check what you entered and try again');
    redirect(back);
  }
  let outcome: { notice: string; to?: string };
  try {
    outcome = await work(operator, input.data);
  } catch (error) {
    if (error instanceof OperatorConflict) await flash('error', error.message);
    else if (error instanceof OperatorRefused)
      await flash('error', 'Not allowed: confirm your second factor again');
    else await flash('error', 'Something went wrong; nothing was changed. Try again.');
    redirect(back);
  }
  await flash('notice', outcome.notice);
  redirect(outcome.to ?? back);
}

const pool = () => getRuntime().pool;
const userPage = (id: string) => `/admin/users/${encodeURIComponent(id)}`;
const idFrom = (form: FormData) => {
  const v = form.get('user_id');
  return typeof v === 'string' && userId.safeParse(v).success ? v : '';
};

export async function banUserAction(form: FormData): Promise<void> {
  const schema = z.object({
    user_id: userId,
    duration: z.enum(Object.keys(BAN_HOURS) as [keyof typeof BAN_HOURS]),
  });
  await act(userPage(idFrom(form)), form, schema, async (op, input) => {
    const hours = BAN_HOURS[input.duration as keyof typeof BAN_HOURS];
    await banUser(pool(), op, input.user_id!, new Date(Date.now() + hours * 3_600_000));
    return { notice: 'Account banned; its sessions have ended' };
  });
}

export async function unbanUserAction(form: FormData): Promise<void> {
  await act(userPage(idFrom(form)), form, z.object({ user_id: userId }), async (op, input) => {
    await unbanUser(pool(), op, input.user_id!);
    return { notice: 'Ban lifted' };
  });
}

export async function deleteUserAction(form: FormData): Promise<void> {
  await act(userPage(idFrom(form)), form, z.object({ user_id: userId }), async (op, input) => {
    await deleteUser(pool(), op, input.user_id!);
    return { notice: 'Account deleted', to: '/admin/users' };
  });
}

export async function revokeSessionAction(form: FormData): Promise<void> {
  const schema = z.object({ user_id: userId, session_id: z.string().uuid('That is not a session id') });
  await act(userPage(idFrom(form)), form, schema, async (op, input) => {
    await revokeSession(pool(), op, input.user_id!, input.session_id!);
    return { notice: 'Session ended' };
  });
}

export async function revokeAllSessionsAction(form: FormData): Promise<void> {
  await act(userPage(idFrom(form)), form, z.object({ user_id: userId }), async (op, input) => {
    const count = await revokeAllSessions(pool(), op, input.user_id!);
    return { notice: count === 1 ? 'One session ended' : `${count} sessions ended` };
  });
}

export async function retryMailAction(form: FormData): Promise<void> {
  const schema = z.object({ outbox_id: z.string().regex(/^\d{1,18}$/, 'That is not a message id') });
  await act('/admin/mail?state=failed', form, schema, async (op, input) => {
    await retryMail(pool(), op, input.outbox_id!);
    return { notice: 'Message queued to be sent again' };
  });
}
