// In charge of the browser session cookie, in @supabase/ssr's format so the same session also
// works with the supabase-js SSR helpers: the name is sb-<first label of the auth host>-auth-token,
// the value "base64-" + base64url(JSON of the session), split into .0, .1, … chunks past 3180
// characters. Unlike @supabase/ssr's browser default the cookie is HttpOnly: only the server
// reads it. Framework-free: cookies in, cookies out.

export const MAX_CHUNK_SIZE = 3180;
const PREFIX = 'base64-';
const MAX_AGE_SECONDS = 400 * 24 * 3600;

export interface StoredSession {
  access_token: string;
  refresh_token: string;
  expires_at: number;
  expires_in: number;
  token_type: 'bearer';
  user: Record<string, unknown>;
}

export interface CookieToSet {
  name: string;
  value: string;
  options: { httpOnly: boolean; sameSite: 'lax'; secure: boolean; path: '/'; maxAge: number };
}

export function sessionCookieName(authUrl: string): string {
  return `sb-${new URL(authUrl).hostname.split('.')[0]}-auth-token`;
}

function options(secure: boolean, maxAge = MAX_AGE_SECONDS): CookieToSet['options'] {
  return { httpOnly: true, sameSite: 'lax', secure, path: '/', maxAge };
}

/**
 * The cookies that store `session` (or clear it when null). Chunks left over from a longer
 * previous value are cleared too, as @supabase/ssr does.
 */
export function sessionCookies(
  name: string,
  session: StoredSession | null,
  existingNames: readonly string[],
  secure: boolean,
): CookieToSet[] {
  const chunks: string[] = [];
  if (session) {
    const value = PREFIX + Buffer.from(JSON.stringify(session), 'utf8').toString('base64url');
    for (let i = 0; i < value.length; i += MAX_CHUNK_SIZE) chunks.push(value.slice(i, i + MAX_CHUNK_SIZE));
  }
  const set: CookieToSet[] =
    chunks.length === 1
      ? [{ name, value: chunks[0]!, options: options(secure) }]
      : chunks.map((value, i) => ({ name: `${name}.${i}`, value, options: options(secure) }));
  const keep = new Set(set.map((c) => c.name));
  for (const existing of existingNames) {
    if ((existing === name || existing.startsWith(`${name}.`)) && !keep.has(existing)) {
      set.push({ name: existing, value: '', options: options(secure, 0) });
    }
  }
  return set;
}

/** Reads the session from a cookie lookup; anything malformed reads as no session. */
export function readSession(
  name: string,
  get: (cookieName: string) => string | undefined,
): StoredSession | null {
  let value = get(name);
  if (value === undefined) {
    const parts: string[] = [];
    for (let i = 0; ; i++) {
      const part = get(`${name}.${i}`);
      if (part === undefined) break;
      parts.push(part);
    }
    if (parts.length === 0) return null;
    value = parts.join('');
  }
  try {
    const json = value.startsWith(PREFIX)
      ? Buffer.from(value.slice(PREFIX.length), 'base64url').toString('utf8')
      : value;
    const session = JSON.parse(json) as Partial<StoredSession>;
    if (typeof session.access_token !== 'string' || typeof session.refresh_token !== 'string') return null;
    return session as StoredSession;
  } catch {
    return null;
  }
}
