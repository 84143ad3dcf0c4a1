// What a list's query string can ask of a page: the page number and search are bounded whatever
// the URL says, a search's wildcards are taken literally, and the pager's links keep the rest of
// the address. The origin check that guards session renewal refuses anything but the app's pages.
import { describe, expect, test } from 'vitest';
import { hrefWith } from '../../src/app/components/pager.js';
import { fromOwnPages } from '../../src/app/lib/same-origin.js';
import { containsPattern, MAX_PAGE, paged, pageRequest, pageWindow } from '../../src/app/lib/paging.js';

describe('pageRequest', () => {
  test.each([
    [{}, 1],
    [{ page: '3' }, 3],
    [{ page: '0' }, 1],
    [{ page: '-2' }, 1],
    [{ page: '2.5' }, 1],
    [{ page: 'abc' }, 1],
    [{ page: '1e9' }, 1],
    [{ page: '99999999999' }, 1],
    [{ page: '999999' }, MAX_PAGE],
    [{ page: ['4', '5'] }, 4],
  ])('%j is page %i', (params, page) => {
    expect(pageRequest(params).page).toBe(page);
  });

  test('the search is trimmed, stripped of control characters and cut at 100 characters', () => {
    expect(pageRequest({ q: '  Acme\u0000 Labs\n ' }).q).toBe('Acme  Labs');
    expect(pageRequest({ q: 'x'.repeat(500) }).q).toHaveLength(100);
    expect(pageRequest({ ipage: '2', iq: 'ada' }, { page: 'ipage', q: 'iq' })).toEqual({ page: 2, q: 'ada' });
  });

  test('a page reads one row past itself; the extra row only says there is more', () => {
    expect(pageWindow({ page: 3, q: '' }, 20)).toEqual({ limit: 21, offset: 40 });
    const rows = Array.from({ length: 21 }, (_, i) => i);
    expect(paged(rows, { page: 1, q: '' }, 20)).toMatchObject({ items: rows.slice(0, 20), hasNext: true });
    expect(paged(rows.slice(0, 20), { page: 1, q: '' }, 20).hasNext).toBe(false);
    expect(paged(rows, { page: MAX_PAGE, q: '' }, 20).hasNext).toBe(false);
  });
});

test('a search matches its text anywhere, its own wildcards literally', () => {
  expect(containsPattern('acme')).toBe('%acme%');
  expect(containsPattern('100%_\\')).toBe('%100\\%\\_\\\\%');
});

test('pager links keep the other parameters and leave page 1 out', () => {
  const params = { page: '2', q: 'ada', ipage: '3', empty: '' };
  expect(hrefWith('/w/acme/members', params, { page: 3 })).toBe('/w/acme/members?q=ada&ipage=3&page=3');
  expect(hrefWith('/w/acme/members', params, { page: 1 })).toBe('/w/acme/members?q=ada&ipage=3');
  expect(hrefWith('/w/acme/members', params, { q: null, page: null })).toBe('/w/acme/members?ipage=3');
  expect(hrefWith('/workspaces', {}, { page: 1 })).toBe('/workspaces');
});

describe('fromOwnPages', () => {
  const app = 'https://app.example.com';
  const headers = (h: Record<string, string>) => new Headers(h);
  test.each([
    [{ origin: app }, true],
    [{ origin: app, 'sec-fetch-site': 'same-origin' }, true],
    [{ 'sec-fetch-site': 'same-origin' }, true],
    [{}, false],
    [{ origin: 'null' }, false],
    [{ origin: 'https://evil.example' }, false],
    [{ origin: 'https://app.example.com.evil.example' }, false],
    [{ origin: 'http://app.example.com' }, false],
    [{ origin: app, 'sec-fetch-site': 'same-site' }, false],
    [{ origin: app, 'sec-fetch-site': 'cross-site' }, false],
    [{ 'sec-fetch-site': 'none' }, false],
  ])('%j: %s', (h, expected) => {
    expect(fromOwnPages(headers(h), app)).toBe(expected);
  });
});
