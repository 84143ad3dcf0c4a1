// In charge of reading the admin API's ban durations as GoTrue does: "none", or a duration in Go's
// syntax (time.ParseDuration: "24h", "1h30m", "90s", "1.5h", "300ms"), which supabase-js documents.

const MS_PER_UNIT: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3, // U+00B5 micro sign
  μs: 1e-3, // U+03BC Greek mu
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};

/** Go's limit: a duration is an int64 of nanoseconds (about 292 years). */
const MAX_MS = 9_223_372_036_854.775;

const PIECE = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;

/** Milliseconds, or null when Go would refuse the text. A sign applies to the whole duration. */
export function parseGoDuration(text: string): number | null {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest.startsWith('-') ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return null;
  let total = 0;
  PIECE.lastIndex = 0;
  while (PIECE.lastIndex < rest.length) {
    const match = PIECE.exec(rest);
    if (!match) return null;
    total += Number(match[1]) * MS_PER_UNIT[match[2]!]!;
  }
  if (total > MAX_MS) return null;
  return sign * total;
}

/**
 * When a ban of `duration` given now ends: undefined for no change, null for "none" (lifted).
 * Throws RangeError with GoTrue's words for a text Go would refuse.
 */
export function banEnds(duration: string | undefined, now = Date.now()): Date | null | undefined {
  if (duration === undefined) return undefined;
  if (duration === 'none') return null;
  const ms = parseGoDuration(duration);
  if (ms === null)
    throw new RangeError(`invalid format for ban duration: time: invalid duration "${duration}"`);
  return new Date(now + ms);
}
