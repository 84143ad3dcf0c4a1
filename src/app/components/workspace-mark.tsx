// A workspace's mark: its logo when it has one the viewer may see, otherwise the first letter of
// its name on a solid square. Decorative wherever the name is written beside it.
import { cn } from '@/app/components/ui/cn';

export function WorkspaceMark({
  name,
  logoUrl,
  className,
}: {
  name: string;
  logoUrl?: string | null;
  className?: string;
}) {
  return (
    <span
      aria-hidden="true"
      data-workspace-mark={logoUrl ? 'logo' : 'letter'}
      className={cn(
        'relative inline-flex size-6 shrink-0 items-center justify-center overflow-hidden rounded-md bg-foreground text-xs font-semibold text-background',
        className,
      )}
    >
      {[...name.trim()][0]?.toUpperCase() ?? '?'}
      {logoUrl ? (
        <img src={logoUrl} alt="" className="absolute inset-0 size-full bg-card object-cover" />
      ) : null}
    </span>
  );
}
