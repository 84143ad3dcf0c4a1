'use client';
// Shows a flash message and clears its cookie once it is on screen, so it appears on the page the
// action led to and not again on the next one. Without script the cookie lapses within a minute.
import { useEffect } from 'react';
import type { FlashMessage } from '@/server/web-session/flash';
import { FLASH_COOKIE } from '@/server/web-session/flash-cookie';

export function FlashMessageView({ message }: { message: FlashMessage }) {
  useEffect(() => {
    const secure = window.location.protocol === 'https:' ? '; Secure' : '';
    document.cookie = `${FLASH_COOKIE}=; Path=/; Max-Age=0; SameSite=Lax${secure}`;
  }, [message.id]);
  return message.kind === 'error' ? (
    <p role="alert" className="error" data-flash="error" data-flash-id={message.id}>
      {message.text}
    </p>
  ) : (
    <p role="status" data-flash="notice" data-flash-id={message.id}>
      {message.text}
    </p>
  );
}
