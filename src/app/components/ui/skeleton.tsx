// A placeholder block shown while a page's data loads.
import type { ComponentProps } from 'react';
import { cn } from '@/app/components/ui/cn';

export function Skeleton({ className, ...props }: ComponentProps<'div'>) {
  return <div aria-hidden="true" className={cn('animate-pulse rounded-md bg-muted', className)} {...props} />;
}
