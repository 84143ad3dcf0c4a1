// In charge of the common shape of server actions that change data: check the session, validate
// the form with a schema, run the work as the signed-in user under row-level security, and either
// go on with a notice (a toast on the next page) or come back with what was wrong, phrased for a
// person. Forms that show field errors use runForm (with useActionState); one-click actions in
// lists and dialogs use runAction, whose refusal comes back as a toast. Not itself a server action.
import { redirect } from 'next/navigation';
import type { z } from 'zod';
import { asUser, refusalMessage } from '@/app/lib/db';
import { flash } from '@/app/lib/flash';
import { submittedValues, type FormState } from '@/app/lib/form-state';
import { currentUser } from '@/app/lib/session';
import type { Tx } from '@/server/db/transactions';

/** What the next page says, and which page that is (`back` unless given). */
export type Outcome = { notice: string; redirectTo?: string };

/** A refusal that belongs to one field of the form (thrown by `work`). */
export class FieldRefusal extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** The first problem with each field, in the words the schema gives. */
export function fieldErrorsOf(error: z.ZodError): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const issue of error.issues) {
    const field = String(issue.path[0] ?? '');
    if (!(field in errors)) errors[field] = issue.message;
  }
  return errors;
}

/** For a form shown with useActionState: field errors and the input come back; success redirects. */
export async function runForm<S extends z.ZodType>(
  back: string,
  form: FormData,
  schema: S,
  work: (tx: Tx, input: z.infer<S>) => Promise<Outcome>,
): Promise<FormState> {
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=${encodeURIComponent(back)}`);
  const values = submittedValues(form);
  const input = schema.safeParse(Object.fromEntries(form));
  if (!input.success) return { fieldErrors: fieldErrorsOf(input.error), values };
  let outcome: Outcome;
  try {
    outcome = await asUser(user, (tx) => work(tx, input.data));
  } catch (error) {
    if (error instanceof FieldRefusal) return { fieldErrors: { [error.field]: error.message }, values };
    return { error: refusalMessage(error), values };
  }
  await flash('notice', outcome.notice);
  redirect(outcome.redirectTo ?? back);
}

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
    await flash('error', input.error.issues[0]?.message ?? 'Check what you entered and try again');
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
