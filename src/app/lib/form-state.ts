// In charge of what a form's server action returns when it does not succeed, for useActionState:
// what is wrong with each field, a refusal about the whole form, and what the person typed so the
// form shows it again. Success does not return: the action leaves a notice (a toast on the next
// page) and redirects. Shared by server actions and the client components that show the state.

export interface FormState {
  /** a refusal that concerns the whole form */
  error?: string;
  /** field name -> what is wrong with it */
  fieldErrors?: Record<string, string>;
  /** what was submitted, to show again (never passwords) */
  values?: Record<string, string>;
}

export const initialFormState: FormState = {};

/** A server action that backs a form through useActionState. */
export type FormAction = (state: FormState, form: FormData) => Promise<FormState>;

/** The submitted text fields, to show again; secrets and React's own fields are left out. */
export function submittedValues(form: FormData): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [key, value] of form.entries()) {
    if (typeof value !== 'string' || key.startsWith('$') || /password|confirm_token/i.test(key)) continue;
    values[key] = value.slice(0, 2000);
  }
  return values;
}
