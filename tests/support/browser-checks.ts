// Test support for browser suites: what a person would check on every page. Accessibility by
// axe-core (injected from node_modules, nothing fetched), no sideways scrolling on a phone, tap
// targets of primary actions, and screenshots of a page in a theme and a size.
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';

const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

export const SCREENSHOTS = 'test-results/screenshots';
export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 800 };

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/** axe-core's serious and critical violations on the page as it is now (WCAG 2.x A and AA). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Next.js may stream a dynamic page's <title> in after its body: give it a moment to arrive, then
  // judge the page as it is (a page that never gets a title still fails document-title).
  await page
    .waitForFunction(() => document.title.trim() !== '', undefined, { timeout: 5000 })
    .catch(() => {});
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: axePath });
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (o: unknown) => Promise<{ violations: unknown[] }> } })
      .axe;
    const result = await axe.run({
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] },
    });
    return result.violations as {
      id: string;
      impact: string | null;
      help: string;
      nodes: { target: string[] }[];
    }[];
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => n.target.join(' ')),
    }));
}

/** How far the page scrolls sideways (0 when it fits its viewport), and what sticks out. */
export async function sidewaysOverflow(page: Page): Promise<{ by: number; widest: string[] }> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const widest = [...document.querySelectorAll('body *')]
      .filter((e) => e.getBoundingClientRect().right > width + 0.5)
      .slice(0, 3)
      .map(
        (e) =>
          `${e.tagName.toLowerCase()}.${String(e.className).slice(0, 60)} "${e.textContent?.slice(0, 30)}"`,
      );
    return { by: document.documentElement.scrollWidth - width, widest };
  });
}

/** A browser profile in a theme ('system' leaves it to prefers-color-scheme) and size. */
export async function themedContext(
  browser: Browser,
  options: {
    theme: 'light' | 'dark' | 'system';
    size?: { width: number; height: number };
    scheme?: 'light' | 'dark';
    url: string;
    javaScriptEnabled?: boolean;
  },
): Promise<BrowserContext> {
  const context = await browser.newContext({
    viewport: options.size ?? DESKTOP,
    colorScheme: options.scheme ?? 'light',
    javaScriptEnabled: options.javaScriptEnabled ?? true,
  });
  context.setDefaultTimeout(15_000);
  if (options.theme !== 'system') {
    await context.addCookies([{ name: 'tenantry-theme', value: options.theme, url: options.url }]);
  }
  return context;
}

/** Saves a screenshot of the whole page (of the window, when a dialog is open) under test-results/screenshots/pages/. */
export async function shoot(page: Page, name: string, { fullPage = true } = {}): Promise<void> {
  mkdirSync(`${SCREENSHOTS}/pages`, { recursive: true });
  // Toasts fade and relative times tick: screenshots are of the page, not of the moment.
  await page.addStyleTag({ content: '[data-sonner-toaster]{display:none!important}' });
  // A page scrolled down (after a form at its foot answered) would show its sticky header midway.
  if (fullPage) await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: `${SCREENSHOTS}/pages/${name}.png`, fullPage });
}

/** The four looks every page is checked in: light and dark, at desktop and phone width. */
export const LOOKS = [
  { theme: 'light', sizeName: 'desktop', size: DESKTOP },
  { theme: 'light', sizeName: 'phone', size: PHONE },
  { theme: 'dark', sizeName: 'desktop', size: DESKTOP },
  { theme: 'dark', sizeName: 'phone', size: PHONE },
] as const;

/**
 * Runs `check` on a fresh page in each of the four looks (its own browser profile, closed after),
 * named like "dark-phone" for screenshots and messages.
 */
export async function inEveryLook(
  browser: Browser,
  url: string,
  check: (page: Page, look: string) => Promise<void>,
): Promise<void> {
  for (const { theme, sizeName, size } of LOOKS) {
    const context = await themedContext(browser, { theme, size, url });
    try {
      await check(await context.newPage(), `${theme}-${sizeName}`);
    } finally {
      await context.close();
    }
  }
}

/**
 * axe-core's serious and critical violations with each of the page's menus open in turn (account
 * menu, workspace switcher, role and action menus: every visible `aria-haspopup="menu"` trigger),
 * named by the trigger's accessible name. A menu that hides the page from assistive technology
 * while leaving it focusable shows up only here.
 */
export async function openMenuViolations(
  page: Page,
  whileOpen: (menu: string, index: number) => Promise<void> = async () => {},
): Promise<{ menu: string; violations: AxeViolation[] }[]> {
  const found: { menu: string; violations: AxeViolation[] }[] = [];
  const triggers = page.locator('button[aria-haspopup="menu"]:visible');
  const n = await triggers.count();
  for (let i = 0; i < n; i++) {
    const trigger = triggers.nth(i);
    const menu = (await trigger.getAttribute('aria-label')) ?? ((await trigger.textContent()) ?? '').trim();
    await trigger.click();
    await page.locator('[role="menu"]').first().waitFor();
    found.push({ menu, violations: await seriousViolations(page) });
    await whileOpen(menu, i);
    await page.keyboard.press('Escape');
    await page.locator('[role="menu"]').first().waitFor({ state: 'detached' });
  }
  return found;
}

/**
 * The padding below the last thing shown in each card on the page (its text, controls, images),
 * in CSS pixels: a card whose list is empty must close as evenly as it opens.
 */
export async function cardBottomPadding(
  page: Page,
): Promise<{ card: string; top: number; bottom: number }[]> {
  return page.evaluate(() => {
    const visible = (e: Element) => {
      const r = e.getBoundingClientRect();
      const s = getComputedStyle(e);
      return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
    };
    return [...document.querySelectorAll('section.rounded-lg.border')].filter(visible).map((card) => {
      const box = card.getBoundingClientRect();
      const leaves = [...card.querySelectorAll('*')].filter(
        (e) =>
          visible(e) &&
          !e.closest('.sr-only') &&
          (e.children.length === 0 || /^(INPUT|BUTTON|SELECT|TEXTAREA|IMG|SVG|P|A|LABEL)$/i.test(e.tagName)),
      );
      const top = Math.min(...leaves.map((e) => e.getBoundingClientRect().top));
      const bottom = Math.max(...leaves.map((e) => e.getBoundingClientRect().bottom));
      const border = parseFloat(getComputedStyle(card).borderBottomWidth) || 0;
      return {
        card:
          card.getAttribute('aria-labelledby') ??
          card.querySelector('h2,h3')?.textContent?.slice(0, 40) ??
          'card',
        top: Math.round(top - box.top - border),
        bottom: Math.round(box.bottom - border - bottom),
      };
    });
  });
}
