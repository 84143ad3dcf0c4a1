// The page shown for any address that does not exist (or that the visitor may not see).
import Link from 'next/link';
import { StatusPage } from '@/app/components/status-page';
import { Button } from '@/app/components/ui/button';

export const metadata = { title: 'Page not found' };

export default function NotFound() {
  return (
    <StatusPage
      code="404"
      title="Page not found"
      actions={
        <>
          <Button asChild>
            <Link href="/workspaces">Go to your workspaces</Link>
          </Button>
          <Button asChild variant="outline">
            <Link href="/">Back to the start</Link>
          </Button>
        </>
      }
    >
      There is nothing here, or you do not have access to it. If someone sent you this link, ask them to check
      it or to invite you.
    </StatusPage>
  );
}
