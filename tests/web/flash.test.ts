// The flash message cookie: what the server sealed opens again, unchanged, for a minute; anything
// altered, signed with another secret, expired or malformed opens as nothing.
import { expect, test } from 'vitest';
import { FLASH_MAX_AGE_SECONDS, openFlash, sealFlash } from '../../src/server/web-session/flash.js';

const SECRET = 'a-test-secret-that-is-long-enough-for-hs256';

test('a sealed message opens unchanged, with an id of its own', () => {
  const a = sealFlash({ kind: 'notice', text: 'Project created' }, SECRET);
  const b = sealFlash({ kind: 'notice', text: 'Project created' }, SECRET);
  expect(openFlash(a.value, SECRET)).toEqual({ id: a.id, kind: 'notice', text: 'Project created' });
  expect(a.id).not.toBe(b.id);
  const refusal = sealFlash({ kind: 'error', text: 'Not allowed: <b>&</b> "quoted"' }, SECRET);
  expect(openFlash(refusal.value, SECRET)?.text).toBe('Not allowed: <b>&</b> "quoted"');
});

test('it lapses after its lifetime', () => {
  const now = Date.now();
  const { value } = sealFlash({ kind: 'notice', text: 'Saved' }, SECRET, now);
  expect(openFlash(value, SECRET, now + (FLASH_MAX_AGE_SECONDS - 1) * 1000)).not.toBeNull();
  expect(openFlash(value, SECRET, now + (FLASH_MAX_AGE_SECONDS + 1) * 1000)).toBeNull();
});

test('altered, foreign or malformed values open as nothing', () => {
  const { value } = sealFlash({ kind: 'notice', text: 'Saved' }, SECRET);
  const [body, mac] = value.split('.') as [string, string];
  const forgedBody = Buffer.from(
    JSON.stringify({ i: 'x', k: 'error', t: 'Your account is suspended', e: 4_000_000_000 }),
  ).toString('base64url');
  for (const bad of [
    undefined,
    '',
    body,
    `${forgedBody}.${mac}`,
    `${body}.${mac.slice(0, -2)}`,
    `${body}x.${mac}`,
    `.${mac}`,
    'Your account is suspended',
    `${body}.${mac}`.repeat(40),
  ]) {
    expect(openFlash(bad, SECRET), String(bad)).toBeNull();
  }
  expect(openFlash(value, 'another-secret-that-is-long-enough-too')).toBeNull();
});

test('long texts are cut, so the cookie stays small', () => {
  const { value } = sealFlash({ kind: 'error', text: 'x'.repeat(5000) }, SECRET);
  expect(value.length).toBeLessThan(1000);
  expect(openFlash(value, SECRET)?.text).toHaveLength(500);
});
