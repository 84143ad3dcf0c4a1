// /admin: the console opens on its users list (after the same check as every console page).
import { redirect } from 'next/navigation';
import { requireOperator } from '@/app/lib/operator';

export const dynamic = 'force-dynamic';

export default async function ConsoleHome() {
  await requireOperator('/admin');
  redirect('/admin/users');
}
