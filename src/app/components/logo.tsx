// The product's mark and name.
import { cn } from '@/app/components/ui/cn';

export function LogoMark({ className }: { className?: string }) {
  return (
    <svg viewBox="0 0 24 24" aria-hidden="true" className={cn('size-6', className)}>
      <rect width="24" height="24" rx="6" className="fill-primary" />
      <path
        d="M7 8.5h10M12 8.5V17"
        strokeWidth="2.4"
        strokeLinecap="round"
        className="stroke-primary-foreground"
        fill="none"
      />
    </svg>
  );
}

export function Logo({ className, nameClassName }: { className?: string; nameClassName?: string }) {
  return (
    <span className={cn('inline-flex items-center gap-2 font-semibold tracking-tight', className)}>
      <LogoMark />
      <span className={nameClassName}>Tenantry</span>
    </span>
  );
}
