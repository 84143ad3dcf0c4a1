// The tabs of a workspace's pages.
import Link from 'next/link';

const TABS = [
  ['', 'Overview'],
  ['/members', 'Members'],
  ['/settings', 'Settings'],
  ['/billing', 'Billing'],
] as const;

export function WorkspaceNav({ slug, current, role }: { slug: string; current: string; role: string }) {
  return (
    <nav aria-label="Workspace" className="muted">
      {TABS.map(([path, label], i) => (
        <span key={path}>
          {i > 0 ? ' · ' : ''}
          {path === current ? <strong>{label}</strong> : <Link href={`/w/${slug}${path}`}>{label}</Link>}
        </span>
      ))}{' '}
      · you are {role}
    </nav>
  );
}
