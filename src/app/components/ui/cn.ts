// In charge of composing class names: later Tailwind utilities win over earlier ones, so a
// component's defaults can be overridden by the className a page passes.
import { clsx, type ClassValue } from 'clsx';
import { twMerge } from 'tailwind-merge';

export function cn(...inputs: ClassValue[]): string {
  return twMerge(clsx(inputs));
}
