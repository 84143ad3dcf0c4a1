// The outcome of the last action: a notice or a refusal, shown as a toast. Only what the server
// itself left (lib/flash.ts) is shown; nothing comes from the URL.
import { readFlash } from '@/app/lib/flash';
import { FlashMessageView } from '@/app/components/flash-message';

export async function Flash() {
  const message = await readFlash();
  return message ? <FlashMessageView key={message.id} message={message} /> : null;
}
