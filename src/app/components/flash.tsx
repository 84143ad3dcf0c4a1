// The outcome of the last action, where a page shows it: a notice, or a refusal shown as such.
// Only what the server itself left (lib/flash.ts) is shown; nothing comes from the URL.
import { readFlash } from '@/app/lib/flash';
import { FlashMessageView } from '@/app/components/flash-message';

export async function Flash() {
  const message = await readFlash();
  return message ? <FlashMessageView message={message} /> : null;
}
