'use client';
// A small menu button for the theme, for pages without the account menu (signing in, errors).
import { Moon, Sun } from 'lucide-react';
import { Button } from '@/app/components/ui/button';
import { DropdownMenu, DropdownMenuContent, DropdownMenuTrigger } from '@/app/components/ui/dropdown-menu';
import { ThemeRadioItems } from '@/app/components/theme-menu';
import type { Theme } from '@/app/lib/theme-cookie';

export function ThemeToggle({ initial }: { initial: Theme }) {
  return (
    <DropdownMenu>
      <DropdownMenuTrigger asChild>
        <Button variant="ghost" size="icon" aria-label="Theme">
          <Sun className="dark:hidden" aria-hidden="true" />
          <Moon className="hidden dark:block" aria-hidden="true" />
        </Button>
      </DropdownMenuTrigger>
      <DropdownMenuContent align="end">
        <ThemeRadioItems initial={initial} />
      </DropdownMenuContent>
    </DropdownMenu>
  );
}
