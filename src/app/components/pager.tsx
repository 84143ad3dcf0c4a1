// The controls under a paged list: which rows are shown ("21–40 of 312"), Previous and Next, and
// numbered links around the current page (the current one marked aria-current="page"). Plain
// links, so they work without script and keep the rest of the address (other lists' pages,
// searches). On phones only Previous, the current page and Next are shown.
import { ChevronLeft, ChevronRight } from 'lucide-react';
import Link from 'next/link';
import { cn } from '@/app/components/ui/cn';
import { lastPage, type Paged } from '@/app/lib/paging';

type Params = Record<string, string | string[] | undefined>;

/** `path` with `params`, `changes` applied (null or '' removes one; page 1 is left out). */
export function hrefWith(
  path: string,
  params: Params,
  changes: Record<string, string | number | null>,
): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (name in changes) continue;
    const v = Array.isArray(value) ? value[0] : value;
    if (v) query.set(name, v);
  }
  for (const [name, value] of Object.entries(changes)) {
    if (value === null || value === '' || value === 1) continue;
    query.set(name, String(value));
  }
  const s = query.toString();
  return s ? `${path}?${s}` : path;
}

const link =
  'inline-flex h-11 min-w-11 items-center justify-center gap-1 rounded-md px-3 text-sm font-medium hover:bg-accent focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-ring sm:h-9 sm:min-w-9';

/** The page numbers to offer: the first, the last, and two either side of the current one. */
function numbers(page: number, last: number): (number | 'gap')[] {
  const shown = new Set([1, last, page - 2, page - 1, page, page + 1, page + 2]);
  const list = [...shown].filter((n) => n >= 1 && n <= last).sort((a, b) => a - b);
  const out: (number | 'gap')[] = [];
  for (const n of list) {
    const prev = out.at(-1);
    if (typeof prev === 'number' && n - prev > 1) out.push('gap');
    out.push(n);
  }
  return out;
}

export function Pager({
  label,
  result,
  href,
  className,
}: {
  /** what is listed, plural ("Workspaces"): names the navigation */
  label: string;
  result: Paged<unknown>;
  /** the address of page `n` */
  href: (n: number) => string;
  className?: string;
}) {
  const { page, size, total, hasNext, items } = result;
  if (page === 1 && !hasNext) return null;
  const from = items.length > 0 ? (page - 1) * size + 1 : 0;
  const to = (page - 1) * size + items.length;
  const last = total !== null ? lastPage(total, size) : hasNext ? page + 1 : page;
  const what = label.toLowerCase();
  return (
    <nav
      aria-label={`${label} pages`}
      className={cn('flex flex-wrap items-center justify-between gap-x-4 gap-y-2', className)}
    >
      <p className="text-sm text-muted-foreground">
        {items.length > 0
          ? `${from.toLocaleString('en')}–${to.toLocaleString('en')}${total !== null ? ` of ${total.toLocaleString('en')}` : ''}`
          : 'Nothing on this page'}
      </p>
      <ul className="flex items-center gap-1">
        <li>
          {page > 1 ? (
            <Link
              href={href(Math.min(page - 1, last))}
              rel="prev"
              className={link}
              aria-label={`Previous page of ${what}`}
            >
              <ChevronLeft className="size-4" aria-hidden="true" />
              <span className="hidden sm:inline">Previous</span>
            </Link>
          ) : null}
        </li>
        {numbers(page, Math.max(last, page)).map((n, i) =>
          n === 'gap' ? (
            <li key={`gap-${i}`} aria-hidden="true" className="hidden px-1 text-muted-foreground sm:block">
              …
            </li>
          ) : (
            <li key={n} className={n === page ? undefined : 'hidden sm:block'}>
              {n === page ? (
                <span aria-current="page" aria-label={`Page ${n}, current`} className={cn(link, 'bg-accent')}>
                  {n}
                </span>
              ) : (
                <Link href={href(n)} className={link} aria-label={`Page ${n} of ${what}`}>
                  {n}
                </Link>
              )}
            </li>
          ),
        )}
        <li>
          {hasNext ? (
            <Link href={href(page + 1)} rel="next" className={link} aria-label={`Next page of ${what}`}>
              <span className="hidden sm:inline">Next</span>
              <ChevronRight className="size-4" aria-hidden="true" />
            </Link>
          ) : null}
        </li>
      </ul>
    </nav>
  );
}
