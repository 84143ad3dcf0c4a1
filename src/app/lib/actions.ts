// In charge of the common shape of server actions that change data: check the session, validate
// the form with a schema, run the work as the signed-in user under row-level security, and return
// to the page with a notice, or with the refusal phrased for a person. Not itself a server action.
import { redirect } from 'next/navigation';
import type { z } from 'zod';
import { asUser, refusalMessage } from '@/app/lib/db';
import { currentUser } from '@/app/lib/session';
import type { Tx } from '@/server/db/transactions';

export type Outcome = { notice: string } | { redirectTo: string };

/** `back` is the page to return to (with ?notice= or ?error=). */
export async function runAction<S extends z.ZodType>(
  back: string,
  form: FormData,
  schema: S,
  work: (tx: Tx, input: z.infer<S>) => Promise<Outcome>,
): Promise<never> {
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=${encodeURIComponent(back)}`);
  const input = schema.safeParse(Object.fromEntries(form));
  if (!input.success)
    redirect(`${back}?error=${encodeURIComponent(input.error.issues[0]?.message ?? 'Invalid input')}`);
  let outcome: Outcome;
  try {
    outcome = await asUser(user, (tx) => work(tx, input.data));
  } catch (error) {
    redirect(`${back}?error=${encodeURIComponent(refusalMessage(error))}`);
  }
  if ('redirectTo' in outcome) redirect(outcome.redirectTo);
  redirect(`${back}?notice=${encodeURIComponent(outcome.notice)}`);
}
