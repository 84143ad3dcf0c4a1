// Text inputs, selects and labels of the design system. Borders have 3:1 contrast; an input
// marked aria-invalid gets a red border next to its error text (colour is never the only sign).
import type { ComponentProps } from 'react';
import { cn } from '@/app/components/ui/cn';

const field =
  'w-full min-w-0 rounded-md border border-input bg-surface px-3 text-base text-foreground shadow-xs transition-colors placeholder:text-muted-foreground focus-visible:border-ring focus-visible:outline-2 focus-visible:outline-offset-0 focus-visible:outline-ring disabled:cursor-not-allowed disabled:opacity-60 aria-invalid:border-destructive sm:text-sm';

export function Input({ className, ...props }: ComponentProps<'input'>) {
  return <input className={cn(field, 'h-11 sm:h-9', className)} {...props} />;
}

export function Select({ className, ...props }: ComponentProps<'select'>) {
  return <select className={cn(field, 'h-11 pr-8 sm:h-9', className)} {...props} />;
}

export function Label({ className, ...props }: ComponentProps<'label'>) {
  return <label className={cn('text-sm leading-none font-medium', className)} {...props} />;
}
