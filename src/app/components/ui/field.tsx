// A labelled form field with its hint and its error: the label names the input, the hint and the
// error are tied to it with aria-describedby, and an error marks it aria-invalid.
import type { ComponentProps, ReactNode } from 'react';
import { Input, Label } from '@/app/components/ui/input';
import { cn } from '@/app/components/ui/cn';

export function FieldError({ id, children }: { id?: string; children?: ReactNode }) {
  if (!children) return null;
  return (
    <p id={id} data-field-error="" className="text-sm font-medium text-danger-text">
      {children}
    </p>
  );
}

export function Field({
  label,
  name,
  hint,
  error,
  className,
  id,
  ...input
}: ComponentProps<'input'> & { label: ReactNode; name: string; hint?: ReactNode; error?: string }) {
  const inputId = id ?? `field-${name}`;
  const hintId = hint ? `${inputId}-hint` : undefined;
  const errorId = error ? `${inputId}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div className={cn('grid gap-2', className)}>
      <Label htmlFor={inputId}>{label}</Label>
      <Input
        id={inputId}
        name={name}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy}
        {...input}
      />
      {hint ? (
        <p id={hintId} className="text-sm text-muted-foreground">
          {hint}
        </p>
      ) : null}
      <FieldError id={errorId}>{error}</FieldError>
    </div>
  );
}

/** A refusal that concerns the whole form, announced when it appears. */
export function FormError({ children }: { children?: ReactNode }) {
  if (!children) return null;
  return (
    <p
      role="alert"
      data-form-error=""
      className="rounded-md border border-destructive/40 bg-danger-surface px-3 py-2 text-sm text-danger-text"
    >
      {children}
    </p>
  );
}
