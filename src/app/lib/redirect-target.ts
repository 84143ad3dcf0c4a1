// In charge of deciding where a `next` parameter may send the browser: only to a path of this app.
// Browsers forgive a lot when they resolve a Location (they drop tabs and newlines, read `\` as
// `/`, treat `//host` as another site), so a candidate is refused unless every form of it, raw
// and percent-decoded, is plainly a local path, and it still is once resolved as a browser would.

/** Any origin works as the base: only whether resolution stays on it matters. */
const APP_ORIGIN = 'http://app.invalid';
const MAX_LENGTH = 2048;
/** At most this many rounds of percent-decoding are looked through (%25252F…). */
const MAX_DECODE_ROUNDS = 4;

// Only visible ASCII: this refuses control characters (which browsers drop, so "/\t/host" reads as
// "//host"), every kind of whitespace, and Unicode lookalikes of "/" in one rule. This app's own
// paths never need anything else.
const VISIBLE_ASCII = /^[\u0021-\u007e]+$/;

function looksLocal(candidate: string): boolean {
  // Without "//" anywhere, dot segments cannot collapse into a second leading slash either.
  return (
    candidate.startsWith('/') &&
    !candidate.includes('//') &&
    !candidate.includes('\\') &&
    VISIBLE_ASCII.test(candidate)
  );
}

/** The decoded forms of `value`, one per round, until stable; null when it cannot be decoded. */
function decodedForms(value: string): string[] | null {
  const forms: string[] = [];
  let current = value;
  for (let round = 0; round < MAX_DECODE_ROUNDS; round++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      return null;
    }
    if (next === current) return forms;
    forms.push(next);
    current = next;
  }
  // Still changing after this many rounds: nobody legitimate encodes that deep.
  return null;
}

/**
 * The same-origin path (with query and fragment) that `next` names, or null when it is missing
 * or is anything but a plain path of this app.
 */
export function localPath(next: string | null | undefined): string | null {
  if (typeof next !== 'string' || next.length === 0 || next.length > MAX_LENGTH) return null;
  if (!looksLocal(next)) return null;
  const decoded = decodedForms(next);
  if (!decoded || !decoded.every(looksLocal)) return null;
  let resolved: URL;
  try {
    resolved = new URL(next, APP_ORIGIN);
  } catch {
    return null;
  }
  if (resolved.origin !== APP_ORIGIN) return null;
  const path = resolved.pathname + resolved.search + resolved.hash;
  return looksLocal(resolved.pathname) ? path : null;
}

/** Where to send the browser after sign-in, refresh and the like: `next` if local, else `fallback`. */
export function safeNext(next: string | null | undefined, fallback = '/workspaces'): string {
  return localPath(next) ?? fallback;
}
