'use client';
// Where outcomes appear: toasts (sonner), drawn with the app's own colour tokens so they follow
// the theme. Polite for notices; refusals are announced as alerts by their content.
import { Toaster as Sonner } from 'sonner';
import type { CSSProperties } from 'react';

export function Toaster() {
  return (
    <Sonner
      position="bottom-right"
      closeButton
      duration={6000}
      visibleToasts={4}
      style={
        {
          '--normal-bg': 'var(--card)',
          '--normal-text': 'var(--foreground)',
          '--normal-border': 'var(--border)',
          '--border-radius': '0.5rem',
        } as CSSProperties
      }
      toastOptions={{ classNames: { toast: 'font-sans shadow-lg', closeButton: 'border-border' } }}
    />
  );
}
