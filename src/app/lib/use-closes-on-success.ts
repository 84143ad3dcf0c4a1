'use client';
// In charge of closing a dialog whose form succeeded. A form action that succeeds redirects, so
// its useActionState value stays as it was; one that fails returns a new value. So: when a
// submission ends and the value is the one it started with, it succeeded.
import { useEffect, useRef } from 'react';

export function useClosesOnSuccess(pending: boolean, state: unknown, close: () => void): void {
  const started = useRef<{ state: unknown } | null>(null);
  useEffect(() => {
    if (pending) {
      started.current ??= { state };
      return;
    }
    if (started.current) {
      const succeeded = started.current.state === state;
      started.current = null;
      if (succeeded) close();
    }
  }, [pending, state, close]);
}
