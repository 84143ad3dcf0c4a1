'use client';
// A destructive action that asks first: the trigger opens a dialog naming what will happen; only
// its confirm button submits the form to the server action. The dialog stays open, its button
// saying what is happening ("Deleting…"), until the action is done, then closes; the outcome
// appears as a toast.
import { useEffect, useRef, useState, type ReactNode, type RefObject } from 'react';
import { useFormStatus } from 'react-dom';
import {
  AlertDialog,
  AlertDialogCancel,
  AlertDialogContent,
  AlertDialogDescription,
  AlertDialogFooter,
  AlertDialogTitle,
  AlertDialogTrigger,
} from '@/app/components/ui/alert-dialog';
import { Button } from '@/app/components/ui/button';
import { SubmitButton } from '@/app/components/ui/submit-button';

/** Calls onDone once the surrounding form's submission has finished. */
function WhenDone({ onDone }: { onDone: () => void }) {
  const { pending } = useFormStatus();
  const was = useRef(false);
  useEffect(() => {
    if (was.current && !pending) onDone();
    was.current = pending;
  }, [pending, onDone]);
  return null;
}

export function ConfirmAction({
  trigger,
  title,
  description,
  confirmLabel,
  pendingLabel,
  action,
  fields,
  open: controlledOpen,
  onOpenChange,
  returnFocusTo,
}: {
  /** the button that opens the dialog (rendered as the trigger); omit when opened from a menu */
  trigger?: ReactNode;
  title: string;
  description: ReactNode;
  confirmLabel: string;
  pendingLabel: string;
  action: (form: FormData) => void | Promise<void>;
  fields: Record<string, string>;
  open?: boolean;
  onOpenChange?: (open: boolean) => void;
  /**
   * Where keyboard focus goes when the dialog closes, for a dialog opened without a trigger (from
   * a menu): the element that led to it, rather than the top of the page.
   */
  returnFocusTo?: RefObject<HTMLElement | null>;
}) {
  const [ownOpen, setOwnOpen] = useState(false);
  const open = controlledOpen ?? ownOpen;
  const setOpen = onOpenChange ?? setOwnOpen;
  return (
    <AlertDialog open={open} onOpenChange={setOpen}>
      {trigger ? <AlertDialogTrigger asChild>{trigger}</AlertDialogTrigger> : null}
      <AlertDialogContent
        onCloseAutoFocus={
          returnFocusTo
            ? (event) => {
                event.preventDefault();
                returnFocusTo.current?.focus();
              }
            : undefined
        }
      >
        <AlertDialogTitle>{title}</AlertDialogTitle>
        <AlertDialogDescription>{description}</AlertDialogDescription>
        <form action={action}>
          {Object.entries(fields).map(([name, value]) => (
            <input key={name} type="hidden" name={name} value={value} />
          ))}
          <WhenDone onDone={() => setOpen(false)} />
          <AlertDialogFooter>
            <AlertDialogCancel asChild>
              <Button variant="outline">Cancel</Button>
            </AlertDialogCancel>
            <SubmitButton variant="destructive" pendingText={pendingLabel}>
              {confirmLabel}
            </SubmitButton>
          </AlertDialogFooter>
        </form>
      </AlertDialogContent>
    </AlertDialog>
  );
}
