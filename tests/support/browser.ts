// Test support: a real Chromium (from @sparticuz/chromium, or CHROME_PATH) driven by
// playwright-core, started with the flags this closed network needs.
import chromium from '@sparticuz/chromium';
import { chromium as playwright, type Browser } from 'playwright-core';

export async function launchBrowser(): Promise<Browser> {
  const executablePath = process.env.CHROME_PATH || (await chromium.executablePath());
  return playwright.launch({
    executablePath,
    headless: true,
    args: [
      // --single-process (meant for serverless hosts) ends the whole browser with its first context.
      ...chromium.args.filter((arg) => arg !== '--single-process'),
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
