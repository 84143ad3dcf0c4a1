// Test support for browser suites: what the page said after an action (its flash message), told
// apart from one already on screen before the action.
import type { Page } from 'playwright-core';

export interface ShownFlash {
  kind: 'notice' | 'error';
  text: string;
}

/** Runs `action` (a click that submits a form) and returns the new flash message it led to. */
export async function flashAfter(page: Page, action: () => Promise<unknown>): Promise<ShownFlash> {
  const before = await page.evaluate(
    () => document.querySelector('[data-flash]')?.getAttribute('data-flash-id') ?? null,
  );
  await action();
  const shown = await page.waitForSelector(
    before ? `[data-flash]:not([data-flash-id="${before}"])` : '[data-flash]',
  );
  return {
    kind: (await shown.getAttribute('data-flash')) as ShownFlash['kind'],
    text: ((await shown.textContent()) ?? '').trim(),
  };
}
