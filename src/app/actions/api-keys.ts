'use server';
// Server actions for a workspace's API keys: create one (its secret comes back in the form's state,
// shown once and never stored by the page) and revoke one (asked first). Both run as the signed-in
// person under row-level security; the database decides who may (owners and admins, decision 0091).
import { revalidatePath } from 'next/cache';
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { FieldRefusal, fieldErrorsOf, runAction } from '@/app/lib/actions';
import { asUser, refusalMessage } from '@/app/lib/db';
import { idField, roleField, slugField } from '@/app/lib/fields';
import { submittedValues, type FormState } from '@/app/lib/form-state';
import { currentUser } from '@/app/lib/session';

export interface CreateKeyState extends FormState {
  /** the new key, shown once right after it is made */
  created?: { name: string; key: string };
}

const createSchema = z.object({
  slug: slugField,
  workspace_id: idField,
  name: z
    .string({ error: 'Name the key' })
    .trim()
    .min(1, 'Name the key, e.g. what uses it')
    .max(100, 'Use at most 100 characters'),
  role: roleField,
  expires_in_days: z.enum(['never', '7', '30', '90', '365'], { error: 'Choose when it expires' }),
});

export async function createApiKeyAction(_state: CreateKeyState, form: FormData): Promise<CreateKeyState> {
  const slug = String(form.get('slug') ?? '');
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=${encodeURIComponent(`/w/${slug}/settings/api-keys`)}`);
  const values = submittedValues(form);
  const input = createSchema.safeParse(Object.fromEntries(form));
  if (!input.success) return { fieldErrors: fieldErrorsOf(input.error), values };
  const i = input.data;
  const expiresAt =
    i.expires_in_days === 'never' ? null : new Date(Date.now() + Number(i.expires_in_days) * 86_400_000);
  try {
    const created = await asUser(user, async (tx) => {
      try {
        const r = await tx.query<{ key: { key: string; name: string } }>(
          'select public.create_api_key($1, $2, $3, $4) as key',
          [i.workspace_id, i.name, i.role, expiresAt],
        );
        return r.rows[0]!.key;
      } catch (error) {
        if ((error as { code?: string }).code === '42501' && /role cannot be above/.test(String(error)))
          throw new FieldRefusal('role', 'Choose a role no higher than your own');
        throw error;
      }
    });
    // The list below the form shows the new key at once; the secret stays only in this answer.
    revalidatePath(`/w/${i.slug}/settings/api-keys`);
    return { created: { name: created.name, key: created.key } };
  } catch (error) {
    if (error instanceof FieldRefusal) return { fieldErrors: { [error.field]: error.message }, values };
    return { error: refusalMessage(error), values };
  }
}

export async function revokeApiKeyAction(form: FormData) {
  const schema = z.object({ slug: slugField, key_id: idField });
  const slug = String(form.get('slug') ?? '');
  await runAction(`/w/${slug}/settings/api-keys`, form, schema, async (tx, i) => {
    const r = await tx.query<{ key: { name: string } }>('select public.revoke_api_key($1) as key', [
      i.key_id,
    ]);
    return { notice: `Key “${r.rows[0]!.key.name}” revoked` };
  });
}
