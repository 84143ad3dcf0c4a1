'use client';
// The page shown when a page fails on the server: an apology, a retry, a way back, and a
// reference to quote (Next's error digest); never the error's own text, which may name internals.
import Link from 'next/link';
import { StatusPage } from '@/app/components/status-page';
import { Button } from '@/app/components/ui/button';

export default function ErrorPage({
  error,
  reset,
}: {
  error: Error & { digest?: string };
  reset: () => void;
}) {
  return (
    <StatusPage
      code="Something went wrong"
      title="This page could not be shown"
      actions={
        <>
          <Button onClick={() => reset()}>Try again</Button>
          <Button asChild variant="outline">
            <Link href="/workspaces">Go to your workspaces</Link>
          </Button>
        </>
      }
    >
      <p>
        Nothing you did was lost. Try again in a moment; if it keeps happening, tell the people who run this
        service.
      </p>
      {error.digest ? (
        <p className="mt-3">
          Reference: <code>{error.digest}</code>
        </p>
      ) : null}
    </StatusPage>
  );
}
