'use client';
// Shows a flash message as a toast and clears its cookie once shown, so it appears on the page
// the action led to and not again on the next one. Without script the same message is shown in
// the page (noscript) and the cookie lapses within a minute.
import { useEffect } from 'react';
import { toast } from 'sonner';
import type { FlashMessage } from '@/server/web-session/flash';
import { FLASH_COOKIE } from '@/server/web-session/flash-cookie';

function Text({ message }: { message: FlashMessage }) {
  return (
    <span
      role={message.kind === 'error' ? 'alert' : 'status'}
      data-flash={message.kind}
      data-flash-id={message.id}
    >
      {message.text}
    </span>
  );
}

export function FlashMessageView({ message }: { message: FlashMessage }) {
  useEffect(() => {
    const secure = window.location.protocol === 'https:' ? '; Secure' : '';
    document.cookie = `${FLASH_COOKIE}=; Path=/; Max-Age=0; SameSite=Lax${secure}`;
    const show = message.kind === 'error' ? toast.error : toast.success;
    show(<Text message={message} />, { id: message.id });
  }, [message]);
  return (
    <noscript>
      <div className="fixed right-4 bottom-4 z-50 max-w-sm rounded-lg border bg-card px-4 py-3 text-sm shadow-lg">
        <Text message={message} />
      </div>
    </noscript>
  );
}
