// The page shown for any address that does not exist (or that the visitor may not see). Someone
// signed in keeps the app's header (their workspaces, their account) around it.
import Link from 'next/link';
import { AppShell } from '@/app/components/app-shell';
import { StatusMessage, StatusPage } from '@/app/components/status-page';
import { Button } from '@/app/components/ui/button';
import { currentUser } from '@/app/lib/session';

export const metadata = { title: 'Page not found' };

export default async function NotFound() {
  const message = {
    code: '404',
    title: 'Page not found',
    children:
      'There is nothing here, or you do not have access to it. If someone sent you this link, ask them to check it or to invite you.',
    actions: (
      <>
        <Button asChild>
          <Link href="/workspaces">Go to your workspaces</Link>
        </Button>
        <Button asChild variant="outline">
          <Link href="/">Back to the start</Link>
        </Button>
      </>
    ),
  };
  const user = await currentUser();
  if (user) {
    return (
      <AppShell user={user}>
        <StatusMessage {...message} />
      </AppShell>
    );
  }
  return <StatusPage {...message} />;
}
