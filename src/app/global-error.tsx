'use client';
// The last resort when even the root layout fails: the same friendly page, with its own document.
import './globals.css';
import { StatusPage } from '@/app/components/status-page';
import { Button } from '@/app/components/ui/button';

export default function GlobalError({
  error,
  reset,
}: {
  error: Error & { digest?: string };
  reset: () => void;
}) {
  return (
    <html lang="en">
      <body className="min-h-dvh bg-background text-foreground antialiased">
        <title>Something went wrong · Tenantry</title>
        <StatusPage
          code="Something went wrong"
          title="This page could not be shown"
          actions={
            <>
              <Button onClick={() => reset()}>Try again</Button>
              <Button asChild variant="outline">
                <a href="/">Back to the start</a>
              </Button>
            </>
          }
        >
          <p>Try again in a moment; if it keeps happening, tell the people who run this service.</p>
          {error.digest ? (
            <p className="mt-3">
              Reference: <code>{error.digest}</code>
            </p>
          ) : null}
        </StatusPage>
      </body>
    </html>
  );
}
