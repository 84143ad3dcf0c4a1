// redirect_to is honoured only for the site, APP_URL and URI_ALLOW_LIST globs (GoTrue's glob rules:
// '.' and '/' separate); every URL that different parsers could read differently is refused.
import { describe, expect, test } from 'vitest';
import {
  chooseRedirect,
  compileGlob,
  createRedirectPolicy,
  isAllowedRedirect,
} from '../../src/server/identity/redirects.js';

const policy = createRedirectPolicy({
  siteUrl: 'https://app.example.com',
  appUrl: 'https://www.example.com',
  allowList: [
    'https://*.example.org/**',
    'myapp://callback',
    'https://preview-{a,b}.example.net/auth/*',
    'https://exact.example.io/cb',
  ],
});

describe('allowed', () => {
  test.each([
    'https://app.example.com',
    'https://app.example.com/',
    'https://app.example.com/welcome?next=%2Fworkspaces#frag',
    'https://APP.Example.com/x',
    'https://app.example.com:443/x',
    'https://www.example.com/auth/callback',
    'https://foo.example.org/cb',
    'https://foo.example.org/a/b/c?x=1',
    'myapp://callback',
    'https://preview-a.example.net/auth/cb',
    'https://exact.example.io/cb',
    'https://exact.example.io/cb#access_token=ignored',
  ])('%s', (url) => {
    expect(isAllowedRedirect(policy, url)).toBe(true);
  });
});

describe('refused', () => {
  test.each([
    ['another host', 'https://evil.com/'],
    ['a look-alike suffix', 'https://app.example.com.evil.com/'],
    ['a look-alike prefix', 'https://evilapp.example.com/'],
    ['user-info naming the site', 'https://app.example.com@evil.com/'],
    ['user-info with a port', 'https://app.example.com:443@evil.com/'],
    ['user-info on the site itself', 'https://evil@app.example.com/'],
    ['backslash before @', 'https://evil.com\\@app.example.com/'],
    ['backslash as a slash', 'https://app.example.com\\.evil.com/'],
    ['backslash path trick', 'https://app.example.com\\\\evil.com'],
    ['encoded dot in the host', 'https://evil%2ecom/'],
    ['encoded host of the site', 'https://app%2Eexample.com/'],
    ['encoded @', 'https://app.example.com%40evil.com/'],
    ['scheme-relative', '//evil.com/'],
    ['scheme-relative with backslashes', '/\\evil.com'],
    ['relative path', '/workspaces'],
    ['scheme without slashes', 'https:evil.com'],
    ['scheme with one slash', 'https:/evil.com'],
    ['javascript', 'javascript:alert(document.cookie)'],
    ['javascript, mixed case', 'JaVaScRiPt:alert(1)'],
    ['javascript with a comment', 'javascript://app.example.com/%0aalert(1)'],
    ['data', 'data:text/html,<script>alert(1)</script>'],
    ['vbscript', 'vbscript:msgbox(1)'],
    ['file', 'file:///etc/passwd'],
    ['leading space', ' https://app.example.com/'],
    ['tab inside', 'https://app.example.com/\t'],
    ['newline inside', 'https://app.example.com/\nLocation: https://evil.com'],
    ['NUL', 'https://app.example.com/\u0000'],
    ['plain http to an https site', 'http://app.example.com/'],
    ['another port of the site', 'https://app.example.com:8443/'],
    ['decimal IP', 'http://2130706433/'],
    ['a loopback address not listed', 'http://127.0.0.1:4000/'],
    ['unicode host', 'https://аpp.example.com/'],
    ['two labels where the glob has one', 'https://a.b.example.org/x'],
    ['glob host followed by another domain', 'https://x.example.org.evil.com/'],
    ['allowed URL in the query', 'https://evil.com/?https://foo.example.org/'],
    ['allowed URL in the fragment', 'https://evil.com/#https://app.example.com'],
    ['alternatives not listed', 'https://preview-c.example.net/auth/cb'],
    ['one path segment glob given two', 'https://preview-a.example.net/auth/cb/extra'],
    ['exact entry with more path', 'https://exact.example.io/cb/evil'],
    ['custom scheme with more', 'myapp://callback.evil'],
    ['empty', ''],
    ['too long', `https://app.example.com/${'a'.repeat(2100)}`],
  ])('%s', (_name, url) => {
    expect(isAllowedRedirect(policy, url)).toBe(false);
  });

  test('a script scheme is refused even when a pattern matches everything', () => {
    const open = createRedirectPolicy({
      siteUrl: 'https://a.test',
      appUrl: 'https://a.test',
      allowList: ['**'],
    });
    expect(isAllowedRedirect(open, 'javascript:alert(1)//https://a.test')).toBe(false);
    expect(isAllowedRedirect(open, 'data:text/html,x')).toBe(false);
    expect(isAllowedRedirect(open, 'https://user@other.test/')).toBe(false);
    expect(isAllowedRedirect(open, 'https://other.test/')).toBe(true);
  });
});

test('a loopback site URL allows any port on the loopback host (native apps), same scheme only', () => {
  const local = createRedirectPolicy({
    siteUrl: 'http://localhost:3000',
    appUrl: 'http://localhost:3000',
    allowList: [],
  });
  expect(isAllowedRedirect(local, 'http://localhost:5173/callback')).toBe(true);
  expect(isAllowedRedirect(local, 'https://localhost:3000/')).toBe(false);
  expect(isAllowedRedirect(local, 'http://127.0.0.1:3000/')).toBe(false);
  expect(isAllowedRedirect(local, 'http://localhost.evil.com:3000/')).toBe(false);
});

test('chooseRedirect: the request if allowed, else the Referer if allowed, else the site URL', () => {
  expect(chooseRedirect(policy, 'https://foo.example.org/cb')).toBe('https://foo.example.org/cb');
  expect(chooseRedirect(policy, 'https://evil.com/', 'https://www.example.com/sign-up')).toBe(
    'https://www.example.com/sign-up',
  );
  expect(chooseRedirect(policy, 'https://evil.com/', 'https://evil.com/')).toBe('https://app.example.com');
  expect(chooseRedirect(policy, undefined)).toBe('https://app.example.com');
});

describe('globs as gobwas/glob reads them, separators . and /', () => {
  test.each([
    ['*.example.com', 'a.example.com', true],
    ['*.example.com', 'a.b.example.com', false],
    ['**.example.com', 'a.b.example.com', true],
    ['http://localhost:3000/*', 'http://localhost:3000/a', true],
    ['http://localhost:3000/*', 'http://localhost:3000/a/b', false],
    ['http://localhost:3000/**', 'http://localhost:3000/a/b?c=d', true],
    ['http://localhost:300?/x', 'http://localhost:3001/x', true],
    ['http://localhost:300?/x', 'http://localhost:300/x', false],
    ['http://[a-c].test', 'http://b.test', true],
    ['http://[!a-c].test', 'http://b.test', false],
    ['http://[!a-c].test', 'http://d.test', true],
    ['http://{foo,bar*}.test', 'http://barbaz.test', true],
    ['http://{foo,bar*}.test', 'http://baz.test', false],
    ['http://a\\*.test', 'http://a*.test', true],
    ['http://a\\*.test', 'http://ab.test', false],
    ['https://x.test/(a|b)+', 'https://x.test/(a|b)+', true],
    ['https://x.test/(a|b)+', 'https://x.test/aa', false],
  ])('%s ~ %s = %s', (pattern, value, expected) => {
    expect(compileGlob(pattern).test(value)).toBe(expected);
  });

  test('an unbalanced pattern is refused, naming the entry', () => {
    expect(() =>
      createRedirectPolicy({
        siteUrl: 'https://a.test',
        appUrl: 'https://a.test',
        allowList: ['https://{a,b'],
      }),
    ).toThrow(/URI_ALLOW_LIST entry "https:\/\/\{a,b" has an unclosed \{/);
    expect(() => compileGlob('https://[abc')).toThrow(/unclosed \[/);
    expect(() => compileGlob('https://x\\')).toThrow(/escape/);
  });
});
