// In charge of the common shape of server actions that change data: check the session, validate
// the form with a schema, run the work as the signed-in user under row-level security, and return
// to the page with a notice, or with the refusal phrased for a person. Not itself a server action.
import { redirect } from 'next/navigation';
import type { z } from 'zod';
import { asUser, refusalMessage } from '@/app/lib/db';
import { flash } from '@/app/lib/flash';
import { currentUser } from '@/app/lib/session';
import type { Tx } from '@/server/db/transactions';

/** What the next page says, and which page that is (`back` unless given). */
export type Outcome = { notice: string; redirectTo?: string };

/** `back` is the page to return to; the notice or refusal goes with it as a flash message. */
export async function runAction<S extends z.ZodType>(
  back: string,
  form: FormData,
  schema: S,
  work: (tx: Tx, input: z.infer<S>) => Promise<Outcome>,
): Promise<never> {
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=${encodeURIComponent(back)}`);
  const input = schema.safeParse(Object.fromEntries(form));
  if (!input.success) {
    await flash('error', input.error.issues[0]?.message ?? 'Invalid input');
    redirect(back);
  }
  let outcome: Outcome;
  try {
    outcome = await asUser(user, (tx) => work(tx, input.data));
  } catch (error) {
    await flash('error', refusalMessage(error));
    redirect(back);
  }
  await flash('notice', outcome.notice);
  redirect(outcome.redirectTo ?? back);
}
