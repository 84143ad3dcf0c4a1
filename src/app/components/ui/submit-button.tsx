'use client';
// A form's submit button that shows its action running: disabled, a spinner and a verb in the
// present ("Creating…") while the form is pending, so a second click cannot send it again. The
// click that would start a second submission while one runs is swallowed as well, before React
// has re-rendered the button as disabled.
import { useFormStatus } from 'react-dom';
import type { MouseEvent } from 'react';
import { Button, type ButtonProps } from '@/app/components/ui/button';
import { Spinner } from '@/app/components/ui/spinner';

export function SubmitButton({
  children,
  pendingText,
  disabled,
  onClick,
  ...props
}: Omit<ButtonProps, 'type' | 'asChild'> & { pendingText: string }) {
  const { pending } = useFormStatus();
  const guard = (event: MouseEvent<HTMLButtonElement>) => {
    if (pending || event.currentTarget.dataset.submitting === 'true') {
      event.preventDefault();
      return;
    }
    onClick?.(event);
  };
  return (
    <Button
      type="submit"
      disabled={disabled || pending}
      aria-disabled={pending || undefined}
      data-pending={pending ? 'true' : undefined}
      onClick={guard}
      {...props}
    >
      {pending ? (
        <>
          <Spinner />
          <span>{pendingText}</span>
        </>
      ) : (
        children
      )}
    </Button>
  );
}
