// The banner every member of a workspace with an overdue payment sees; owners get the way to fix it.
import { TriangleAlert } from 'lucide-react';
import Link from 'next/link';

export function PastDueBanner({ slug, owner }: { slug: string; owner: boolean }) {
  return (
    <div className="border-b border-warning-text/30 bg-warning-surface">
      <p
        role="alert"
        className="banner mx-auto flex max-w-6xl items-start gap-2 px-4 py-3 text-sm text-warning-text sm:px-6"
      >
        <TriangleAlert className="mt-0.5 size-4 shrink-0" aria-hidden="true" />
        <span>
          Payment overdue: the last payment for this workspace failed.{' '}
          {owner ? (
            <>
              <Link href={`/w/${slug}/billing`} className="font-medium underline">
                Update the payment method
              </Link>
              .
            </>
          ) : (
            'An owner needs to update the payment method.'
          )}{' '}
          After the grace period the workspace becomes read-only.
        </span>
      </p>
    </div>
  );
}
