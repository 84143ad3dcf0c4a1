// Test support for browser suites: what the page said after an action (its flash message, shown
// as a toast), told apart from any already on screen before the action.
import type { Page } from 'playwright-core';

export interface ShownFlash {
  kind: 'notice' | 'error';
  text: string;
}

/** Runs `action` (a click that submits a form) and returns the new flash message it led to. */
export async function flashAfter(page: Page, action: () => Promise<unknown>): Promise<ShownFlash> {
  const before = await page.evaluate(() =>
    [...document.querySelectorAll('[data-flash]')].map((e) => e.getAttribute('data-flash-id')),
  );
  await action();
  const shown = await page.waitForFunction(
    (seen) =>
      [...document.querySelectorAll('[data-flash]')].find(
        (e) => !seen.includes(e.getAttribute('data-flash-id')),
      ) ?? null,
    before,
    { timeout: 15_000 },
  );
  const element = shown.asElement()!;
  return {
    kind: (await element.getAttribute('data-flash')) as ShownFlash['kind'],
    text: ((await element.textContent()) ?? '').trim(),
  };
}
