// The spinner shown in a button while its action runs (hidden from screen readers: the button's
// text says what is happening).
import { LoaderCircle } from 'lucide-react';
import { cn } from '@/app/components/ui/cn';

export function Spinner({ className }: { className?: string }) {
  return <LoaderCircle aria-hidden="true" className={cn('size-4 animate-spin', className)} />;
}
