// In charge of flash messages for pages and server actions: an action leaves the outcome of what
// it did with flash() before it redirects; the next page shows it (components/flash.tsx) and the
// browser then clears it. Messages never travel in the URL, so a link cannot put words in the
// app's mouth. Any page, or a future toast area, can read the current message with readFlash().
import { cookies } from 'next/headers';
import { getRuntime } from '@/server/runtime';
import {
  FLASH_COOKIE,
  FLASH_MAX_AGE_SECONDS,
  openFlash,
  sealFlash,
  type FlashKind,
  type FlashMessage,
} from '@/server/web-session/flash';

export type { FlashKind, FlashMessage };

/** Leaves a message for the next page. Only server actions and route handlers may (cookies). */
export async function flash(kind: FlashKind, text: string): Promise<void> {
  const { config } = getRuntime();
  const { value } = sealFlash({ kind, text }, config.jwtSecret);
  (await cookies()).set(FLASH_COOKIE, value, {
    // Readable by the page's script, which clears it once shown: it carries nothing secret (the
    // person's own notice) and its signature, not its secrecy, is what makes it trustworthy.
    httpOnly: false,
    sameSite: 'lax',
    secure: config.appUrl.startsWith('https://'),
    path: '/',
    maxAge: FLASH_MAX_AGE_SECONDS,
  });
}

/** The message the server left for this browser, if any (signature and age checked). */
export async function readFlash(): Promise<FlashMessage | null> {
  const value = (await cookies()).get(FLASH_COOKIE)?.value;
  return openFlash(value, getRuntime().config.jwtSecret);
}
