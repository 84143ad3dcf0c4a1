'use client';
// A time shown relative to now ("3 minutes ago", "in 6 days"), with the exact time in the
// viewer's own time zone on hover and for assistive technology.
import { useEffect, useState } from 'react';

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
];

export function relative(date: Date, now = Date.now()): string {
  const seconds = Math.round((date.getTime() - now) / 1000);
  if (Math.abs(seconds) < 45) return 'just now';
  const format = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === 'minute')
      return format.format(Math.round(seconds / size), unit);
  }
  return 'just now';
}

export function RelativeTime({ date, className }: { date: Date | string; className?: string }) {
  const when = new Date(date);
  const [exact, setExact] = useState(() => when.toISOString().replace('T', ' ').slice(0, 16) + ' UTC');
  const [text, setText] = useState(() => relative(when));
  useEffect(() => {
    setExact(when.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }));
    setText(relative(when));
    const timer = setInterval(() => setText(relative(when)), 60_000);
    return () => clearInterval(timer);
  }, [when.getTime()]);
  return (
    <time dateTime={when.toISOString()} title={exact} className={className} suppressHydrationWarning>
      {text}
    </time>
  );
}
