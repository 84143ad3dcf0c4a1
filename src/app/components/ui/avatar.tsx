'use client';
// A person's avatar: their initials on a colour derived from who they are (the same person always
// gets the same colour), with their picture on top when they set one and it loads. The initials
// are in the server's HTML, so nothing pops in. The picture is the address they gave; the server
// fetches nothing.
import { useState } from 'react';
import { cn } from '@/app/components/ui/cn';

/** "Ada Lovelace" -> "AL"; "grace@example.com" -> "G". */
export function initials(name: string): string {
  const base = name.includes('@') && !name.includes(' ') ? name.split('@')[0]! : name;
  const words = base
    .split(/[\s._-]+/)
    .filter(Boolean)
    .slice(0, 2);
  const letters = words.map((w) => [...w][0] ?? '').join('');
  return (letters || '?').toUpperCase();
}

const HUES = [
  'bg-indigo-600',
  'bg-violet-600',
  'bg-sky-700',
  'bg-teal-700',
  'bg-emerald-700',
  'bg-amber-700',
  'bg-rose-600',
  'bg-fuchsia-700',
];

function hueOf(seed: string): string {
  let h = 0;
  for (const c of seed) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return HUES[h % HUES.length]!;
}

export function Avatar({
  name,
  seed,
  src,
  className,
}: {
  name: string;
  seed?: string;
  src?: string | null;
  className?: string;
}) {
  const [failed, setFailed] = useState(false);
  return (
    <span
      aria-hidden="true"
      className={cn(
        'relative inline-flex size-8 shrink-0 items-center justify-center overflow-hidden rounded-full text-xs font-semibold text-white select-none',
        hueOf(seed ?? name),
        className,
      )}
    >
      {initials(name)}
      {src && !failed ? (
        <img
          src={src}
          alt=""
          referrerPolicy="no-referrer"
          loading="lazy"
          onError={() => setFailed(true)}
          className="absolute inset-0 size-full object-cover"
        />
      ) : null}
    </span>
  );
}
