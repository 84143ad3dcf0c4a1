// The tabs of a workspace's pages.
import Link from 'next/link';

const TABS = [
  ['', 'Overview'],
  ['/members', 'Members'],
  ['/settings', 'Settings'],
  ['/billing', 'Billing'],
] as const;

export function WorkspaceNav({
  slug,
  current,
  role,
  pastDue = false,
}: {
  slug: string;
  current: string;
  role: string;
  pastDue?: boolean;
}) {
  return (
    <>
      {pastDue ? (
        <p role="alert" className="error banner">
          Payment overdue: the last payment for this workspace failed.{' '}
          {role === 'owner' ? (
            <>
              <Link href={`/w/${slug}/billing`}>Update the payment method</Link>.
            </>
          ) : (
            'An owner needs to update the payment method.'
          )}{' '}
          After the grace period the workspace becomes read-only.
        </p>
      ) : null}
      <nav aria-label="Workspace" className="muted">
        {TABS.map(([path, label], i) => (
          <span key={path}>
            {i > 0 ? ' · ' : ''}
            {path === current ? <strong>{label}</strong> : <Link href={`/w/${slug}${path}`}>{label}</Link>}
          </span>
        ))}{' '}
        · you are {role}
      </nav>
    </>
  );
}
