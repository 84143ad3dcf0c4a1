// Ban durations read as Go's time.ParseDuration reads them (the syntax supabase-js documents).
import { expect, test } from 'vitest';
import { banEnds, parseGoDuration } from '../../src/server/identity/durations.js';

test('Go durations: units, fractions, sequences and a sign', () => {
  expect(parseGoDuration('24h')).toBe(86_400_000);
  expect(parseGoDuration('2h45m')).toBe(9_900_000);
  expect(parseGoDuration('1.5h')).toBe(5_400_000);
  expect(parseGoDuration('.5s')).toBe(500);
  expect(parseGoDuration('300ms')).toBe(300);
  expect(parseGoDuration('1m30s')).toBe(90_000);
  expect(parseGoDuration('1500us')).toBe(1.5);
  expect(parseGoDuration('2µs')).toBe(0.002);
  expect(parseGoDuration('2μs')).toBe(0.002);
  expect(parseGoDuration('1000000ns')).toBe(1);
  expect(parseGoDuration('0')).toBe(0);
  expect(parseGoDuration('-1h')).toBe(-3_600_000);
  expect(parseGoDuration('+10m')).toBe(600_000);
});

test('what Go refuses is refused', () => {
  for (const bad of [
    '',
    '-',
    '24',
    'h',
    '1d',
    '1 h',
    '1h ',
    ' 1h',
    '1h-30m',
    '1..5h',
    'none!',
    '1e3s',
    '3000000h',
  ]) {
    expect(parseGoDuration(bad), bad).toBeNull();
  }
});

test('a ban ends the duration after now; "none" lifts it; nonsense names the text', () => {
  const now = Date.UTC(2026, 0, 1);
  expect(banEnds('90m', now)).toEqual(new Date(now + 5_400_000));
  expect(banEnds('none', now)).toBeNull();
  expect(banEnds(undefined, now)).toBeUndefined();
  expect(() => banEnds('forever', now)).toThrow(
    'invalid format for ban duration: time: invalid duration "forever"',
  );
});
