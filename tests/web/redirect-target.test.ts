// Where `next` may send the browser after sign-in, sign-up and session refresh: plain paths of
// this app pass (normalised as a browser resolves them); anything a browser could read as another
// site, or that hides characters a browser would drop or reinterpret, falls back.
import { describe, expect, test } from 'vitest';
import { localPath, safeNext } from '../../src/app/lib/redirect-target.js';

const hostile: [string, string][] = [
  ['tab after the slash', '/\t/evil.example'],
  ['encoded tab', '/%09/evil.example'],
  ['double-encoded tab', '/%2509/evil.example'],
  ['newline', '/\n/evil.example'],
  ['encoded newline', '/%0a/evil.example'],
  ['carriage return', '/\r/evil.example'],
  ['encoded carriage return', '/%0D/evil.example'],
  ['NUL', '/\u0000/evil.example'],
  ['encoded NUL', '/%00/evil.example'],
  ['DEL', '/\u007f/evil.example'],
  ['C1 control', '/\u0085/evil.example'],
  ['backslash', '\\evil.example'],
  ['slash backslash', '/\\evil.example'],
  ['backslash slash', '\\/evil.example'],
  ['slash encoded backslash', '/%5Cevil.example'],
  ['slash encoded backslash, lower case', '/%5cevil.example'],
  ['double-encoded backslash', '/%255Cevil.example'],
  ['backslash in the middle', '/w/acme\\..\\..\\evil'],
  ['protocol-relative', '//evil.example'],
  ['triple slash', '///evil.example'],
  ['slash encoded slash', '/%2Fevil.example'],
  ['encoded double slash', '%2F%2Fevil.example'],
  ['double-encoded double slash', '/%252F%252Fevil.example'],
  ['double slash later in the path', '/w//evil.example'],
  ['dot segment before a double slash', '/.//evil.example'],
  ['encoded dot segments before a double slash', '/%2e%2e%2F%2Fevil.example'],
  ['absolute https URL', 'https://evil.example/'],
  ['absolute http URL', 'http://evil.example'],
  ['scheme without slashes', 'https:evil.example'],
  ['javascript:', 'javascript:alert(1)'],
  ['javascript: with a leading slash lookalike', 'javascript://%0aalert(1)'],
  ['data:', 'data:text/html,<script>alert(1)</script>'],
  ['vbscript:', 'vbscript:msgbox(1)'],
  ['relative path', 'workspaces'],
  ['dot-relative path', './workspaces'],
  ['leading space', ' /workspaces'],
  ['trailing space', '/workspaces '],
  ['no-break space', '/\u00a0/evil.example'],
  ['ideographic space', '/\u3000/evil.example'],
  ['line separator', '/\u2028/evil.example'],
  ['zero-width space', '/\u200b/evil.example'],
  ['byte-order mark', '/\ufeff/evil.example'],
  ['fullwidth solidus', '/\uff0fevil.example'],
  ['encoded fullwidth solidus', '/%EF%BC%8Fevil.example'],
  ['encoded ideographic space', '/%E3%80%80/evil.example'],
  ['encoded space', '/search?q=a%20b'],
  ['malformed percent-encoding', '/%E0%A4%A'],
  ['user info', '/@evil.example'.replace('/', '//')],
  ['empty', ''],
  ['far too long', `/${'a'.repeat(3000)}`],
  ['encoded five levels deep', '/%2525252F%2525252Fevil.example'],
];

describe('refused: falls back', () => {
  test.each(hostile)('%s', (_name, next) => {
    expect(localPath(next)).toBeNull();
    expect(safeNext(next)).toBe('/workspaces');
    expect(safeNext(next, '/elsewhere')).toBe('/elsewhere');
  });

  test('missing values fall back', () => {
    expect(safeNext(null)).toBe('/workspaces');
    expect(safeNext(undefined)).toBe('/workspaces');
  });
});

describe('accepted: the same path, as a browser resolves it', () => {
  test.each([
    ['/workspaces', '/workspaces'],
    ['/w/acme/members', '/w/acme/members'],
    ['/invitations/accept?token=AbC_123', '/invitations/accept?token=AbC_123'],
    ['/w/acme?tab=projects#activity', '/w/acme?tab=projects#activity'],
    ['/settings/profile', '/settings/profile'],
    ['/w/acme/../other', '/w/other'],
    ['/w/%61cme', '/w/%61cme'],
  ])('%s', (next, expected) => {
    expect(localPath(next)).toBe(expected);
    expect(safeNext(next)).toBe(expected);
  });
});

test('whatever is accepted stays on the app when a browser resolves it from any page', () => {
  const origin = 'https://app.example.com';
  for (const [, next] of hostile) {
    const target = safeNext(next);
    for (const from of [`${origin}/`, `${origin}/session/refresh`, `${origin}/w/acme/members`]) {
      expect(new URL(target, from).origin).toBe(origin);
    }
  }
});
