'use client';
// In charge of showing a secret the service keeps no readable copy of (a new API key, a webhook's
// signing secret): the secret once, a copy button, and the way back to the page once it is saved.
import { Copy } from 'lucide-react';
import { useState, type ReactNode } from 'react';
import { Button } from '@/app/components/ui/button';

export function SecretShownOnce({
  secret,
  label,
  copyLabel,
  savedHref,
  marker,
  children,
}: {
  secret: string;
  /** the secret's accessible name */
  label: string;
  /** the copy button's words */
  copyLabel: string;
  /** where "I have saved it" leads (the page without the secret) */
  savedHref: string;
  /** a data attribute naming the panel, for the page's tests */
  marker: string;
  /** the sentence saying what to copy */
  children: ReactNode;
}) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="grid gap-3" {...{ [marker]: '' }}>
      <p role="status" className="text-sm font-medium">
        {children}
      </p>
      <code
        aria-label={label}
        className="block overflow-x-auto rounded-md border bg-muted p-3 font-mono text-sm break-all"
      >
        {secret}
      </code>
      <div className="flex flex-wrap gap-2">
        <Button
          type="button"
          variant="outline"
          onClick={() => {
            void navigator.clipboard?.writeText(secret).then(() => setCopied(true));
          }}
        >
          <Copy aria-hidden="true" />
          {copied ? 'Copied' : copyLabel}
        </Button>
        <Button asChild>
          <a href={savedHref}>I have saved it</a>
        </Button>
      </div>
    </div>
  );
}
