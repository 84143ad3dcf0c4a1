// In charge of where e-mail links and /verify may send people (redirect_to): back to the site
// (SITE_URL, APP_URL) or to a URL matching the URI_ALLOW_LIST globs, with GoTrue's glob rules;
// anything else falls back to the site URL. URLs that parse differently in different places
// (user-info, backslashes, encoded or unusual hosts, scheme-relative, script schemes) are refused
// before any pattern is consulted. Pure.

/** A compiled URI_ALLOW_LIST entry. */
export interface AllowPattern {
  source: string;
  regex: RegExp;
}

export interface RedirectPolicy {
  siteUrl: string;
  /** the site URL and APP_URL: any path on these origins is allowed */
  origins: URL[];
  allowList: AllowPattern[];
}

// Never a redirect target, whatever the allow list says.
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:']);
const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };
// GoTrue's rule for http(s) host names; bracketed IPv6 literals are let through to the URL parser.
const REGULAR_HOSTNAME = /^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$/;
const IPV6_LITERAL = /^\[[0-9a-fA-F:.]+\]$/;
const MAX_REDIRECT_LENGTH = 2048;
// eslint-disable-next-line no-control-regex -- control characters are exactly what it must find
const UNSAFE_CHARACTERS = /[\u0000-\u0020\u007f\\]/;

function escapeRegex(char: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(char) ? `\\${char}` : char;
}

/**
 * Compiles a glob with the semantics of gobwas/glob (what GoTrue uses) with '.' and '/' as
 * separators: `*` any run of characters without a separator, `**` any run at all, `?` one
 * non-separator character, `[abc]`, `[a-z]`, `[!abc]` character classes, `{a,b}` alternatives,
 * `\` escapes. Throws on an unbalanced pattern.
 */
export function compileGlob(pattern: string): RegExp {
  let i = 0;
  const NOT_SEPARATOR = '[^./]';

  function parseSequence(inAlternatives: boolean): string {
    let out = '';
    while (i < pattern.length) {
      const c = pattern[i]!;
      if (inAlternatives && (c === ',' || c === '}')) return out;
      if (c === '\\') {
        const next = pattern[i + 1];
        if (next === undefined) throw new Error('ends with an unfinished escape');
        out += escapeRegex(next);
        i += 2;
      } else if (c === '*') {
        if (pattern[i + 1] === '*') {
          out += '[\\s\\S]*';
          i += 2;
        } else {
          out += `${NOT_SEPARATOR}*`;
          i += 1;
        }
      } else if (c === '?') {
        out += NOT_SEPARATOR;
        i += 1;
      } else if (c === '[') {
        const end = pattern.indexOf(']', i + 2);
        if (end === -1) throw new Error('has an unclosed [');
        let body = pattern.slice(i + 1, end);
        const negated = body.startsWith('!');
        if (negated) body = body.slice(1);
        if (body === '') throw new Error('has an empty character class');
        const parts = body.replace(/\\/g, '\\\\').replace(/\]/g, '\\]').replace(/\^/g, '\\^');
        out += `[${negated ? '^' : ''}${parts}]`;
        i = end + 1;
      } else if (c === '{') {
        i += 1;
        const alternatives: string[] = [parseSequence(true)];
        while (pattern[i] === ',') {
          i += 1;
          alternatives.push(parseSequence(true));
        }
        if (pattern[i] !== '}') throw new Error('has an unclosed {');
        i += 1;
        out += `(?:${alternatives.join('|')})`;
      } else if (c === '}' || c === ',') {
        out += escapeRegex(c);
        i += 1;
      } else {
        out += escapeRegex(c);
        i += 1;
      }
    }
    if (inAlternatives) throw new Error('has an unclosed {');
    return out;
  }

  const body = parseSequence(false);
  return new RegExp(`^${body}$`);
}

/** Builds the policy; throws naming the first allow-list entry that is not a valid glob. */
export function createRedirectPolicy(input: {
  siteUrl: string;
  appUrl: string;
  allowList: readonly string[];
}): RedirectPolicy {
  const allowList = input.allowList.map((source) => {
    try {
      return { source, regex: compileGlob(source) };
    } catch (error) {
      throw new Error(`URI_ALLOW_LIST entry "${source}" ${(error as Error).message}`, { cause: error });
    }
  });
  return {
    siteUrl: input.siteUrl,
    origins: [new URL(input.siteUrl), new URL(input.appUrl)],
    allowList,
  };
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '127.0.0.1' || hostname === '[::1]';
}

/**
 * The authority exactly as written must be what the URL parser understood as the host, so
 * `https://app@evil`, `https://evil%2Ecom`, `https:evil` and friends never pass.
 */
function authorityIsPlain(raw: string, url: URL): boolean {
  const prefix = `${url.protocol}//`;
  if (raw.slice(0, prefix.length).toLowerCase() !== prefix) return false;
  const rest = raw.slice(prefix.length);
  const authority = rest.slice(0, rest.search(/[/?#]|$/)).toLowerCase();
  const withDefaultPort = `${url.hostname}:${DEFAULT_PORTS[url.protocol] ?? ''}`;
  if (authority !== url.host && authority !== withDefaultPort) return false;
  return REGULAR_HOSTNAME.test(url.hostname) || IPV6_LITERAL.test(url.hostname);
}

function isSiteUrl(url: URL, origins: URL[]): boolean {
  return origins.some(
    (site) =>
      site.protocol === url.protocol &&
      site.hostname === url.hostname &&
      // Native apps on the loopback address pick their port at run time (RFC 8252, 7.3).
      (site.port === url.port || isLoopbackHost(url.hostname)),
  );
}

/** Whether `raw` may be redirected to. */
export function isAllowedRedirect(policy: RedirectPolicy, raw: string | null | undefined): boolean {
  if (!raw || raw.length > MAX_REDIRECT_LENGTH) return false;
  // Control characters, spaces and backslashes are read differently by browsers and parsers.
  if (UNSAFE_CHARACTERS.test(raw)) return false;
  let url: URL;
  try {
    url = new URL(raw); // absolute only: scheme-relative and relative URLs throw here
  } catch {
    return false;
  }
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return false;
  const web = url.protocol === 'http:' || url.protocol === 'https:';
  if (web) {
    if (!authorityIsPlain(raw, url)) return false;
    if (isSiteUrl(url, policy.origins)) return true;
  } else if (url.username || url.password) {
    return false;
  }
  // Like GoTrue: patterns see the URL as written, without its fragment.
  const withoutFragment = raw.split('#', 1)[0]!;
  return policy.allowList.some((pattern) => pattern.regex.test(withoutFragment));
}

/** The redirect to use: the requested one if allowed, else the Referer if allowed, else the site URL. */
export function chooseRedirect(
  policy: RedirectPolicy,
  requested: string | null | undefined,
  referer?: string | null,
): string {
  if (isAllowedRedirect(policy, requested)) return requested!;
  if (isAllowedRedirect(policy, referer)) return referer!;
  return policy.siteUrl;
}
