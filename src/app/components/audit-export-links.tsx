// In charge of the audit log's export links (CSV and JSON of the lines the filters select), shared
// by a workspace's log and the operator console's.
import { buttonVariants } from '@/app/components/ui/button';

/** `hrefFor` gives the export's address for a format, with the page's filters. */
export function AuditExportLinks({ hrefFor }: { hrefFor: (format: 'csv' | 'json') => string }) {
  return (
    <div className="mt-4 flex flex-wrap gap-2">
      <a className={buttonVariants({ variant: 'outline', size: 'sm' })} href={hrefFor('csv')} download>
        Export CSV
      </a>
      <a className={buttonVariants({ variant: 'outline', size: 'sm' })} href={hrefFor('json')} download>
        Export JSON
      </a>
    </div>
  );
}
