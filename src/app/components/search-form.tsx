// A list's search: a GET form (it works without script, and the address can be shared or
// bookmarked) that keeps the page's other parameters, starts again at the first page, and offers
// to clear the search once there is one.
import { Search } from 'lucide-react';
import Link from 'next/link';
import { Button } from '@/app/components/ui/button';
import { Input } from '@/app/components/ui/input';
import { MAX_SEARCH_LENGTH } from '@/app/lib/paging';

export function SearchForm({
  id,
  path,
  name,
  value,
  label,
  placeholder,
  keep = {},
  clearHref,
}: {
  id: string;
  path: string;
  /** the query parameter the search goes in */
  name: string;
  value: string;
  /** for screen readers: what is searched, and by what */
  label: string;
  placeholder: string;
  /** other parameters to keep (other lists' pages and searches) */
  keep?: Record<string, string>;
  clearHref: string;
}) {
  return (
    <form role="search" method="get" action={path} className="flex min-w-0 flex-wrap items-center gap-2">
      {Object.entries(keep).map(([k, v]) => (
        <input key={k} type="hidden" name={k} value={v} />
      ))}
      <label htmlFor={id} className="sr-only">
        {label}
      </label>
      <div className="relative min-w-0 flex-1 basis-48">
        <Search
          className="pointer-events-none absolute top-1/2 left-3 size-4 -translate-y-1/2 text-muted-foreground"
          aria-hidden="true"
        />
        <Input
          id={id}
          type="search"
          name={name}
          defaultValue={value}
          placeholder={placeholder}
          maxLength={MAX_SEARCH_LENGTH}
          autoComplete="off"
          className="pl-9"
        />
      </div>
      <Button type="submit" variant="outline">
        Search
      </Button>
      {value ? (
        <Button asChild variant="ghost">
          <Link href={clearHref}>Clear search</Link>
        </Button>
      ) : null}
    </form>
  );
}
