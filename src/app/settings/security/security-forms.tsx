'use client';
// The forms of the security page: setting up an authenticator app in two steps (a QR code and the
// secret to type in, then the first code), the recovery codes shown once with copy and download,
// new recovery codes, and removing the app after asking.
import { Copy, Download, ShieldCheck, Trash2 } from 'lucide-react';
import { useActionState, useState } from 'react';
import {
  cancelEnrolmentAction,
  confirmEnrolmentAction,
  newRecoveryCodesAction,
  removeFactorAction,
  startEnrolmentAction,
  type EnrolState,
} from '@/app/actions/mfa';
import { ConfirmAction } from '@/app/components/confirm-action';
import { AddSecurityKeyButton } from '@/app/components/passkey-buttons';
import { RelativeTime } from '@/app/components/relative-time';
import { Button } from '@/app/components/ui/button';
import { Field, FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { AddPhoneFactor, usePhoneEnrolment } from '@/app/settings/security/phone-factor-forms';

const initial: EnrolState = {};

/** The codes, once: copy them, download them as a text file, then they are gone from the page. */
export function RecoveryCodes({ codes }: { codes: string[] }) {
  const [copied, setCopied] = useState(false);
  const text = `Tenantry recovery codes (each works once)\n\n${codes.join('\n')}\n`;
  return (
    <div className="grid gap-4" data-recovery-codes="">
      <p role="status" className="text-sm font-medium">
        Save these recovery codes somewhere safe. They are shown only now; each signs you in once if you lose
        your phone.
      </p>
      <ul
        aria-label="Recovery codes"
        className="grid grid-cols-2 gap-2 rounded-md border bg-muted p-4 font-mono text-sm sm:max-w-md"
      >
        {codes.map((code) => (
          <li key={code}>{code}</li>
        ))}
      </ul>
      <div className="flex flex-wrap gap-2">
        <Button
          type="button"
          variant="outline"
          onClick={() => {
            void navigator.clipboard?.writeText(text).then(() => setCopied(true));
          }}
        >
          <Copy aria-hidden="true" />
          {copied ? 'Copied' : 'Copy'}
        </Button>
        <Button variant="outline" asChild>
          <a
            href={`data:text/plain;charset=utf-8,${encodeURIComponent(text)}`}
            download="tenantry-recovery-codes.txt"
          >
            <Download aria-hidden="true" />
            Download
          </a>
        </Button>
        <Button asChild>
          <a href="/settings/security">I have saved them</a>
        </Button>
      </div>
    </div>
  );
}

/**
 * The two-step card's body, whether or not an app is set up: one component in one place, so the
 * recovery codes stay on screen when confirming the app refreshes the page around it.
 */
export function TwoStepSettings({
  factor,
  securityKeys,
  phones = false,
}: {
  factor: { id: string; createdAt: string; kind: string } | null;
  /** security keys may be set up (MFA_WEBAUTHN_ENROLL_ENABLED) */
  securityKeys: boolean;
  /** a phone may be the second step (an SMS provider is configured) */
  phones?: boolean;
}) {
  const [started, start] = useActionState(startEnrolmentAction, initial);
  const [confirmed, confirm] = useActionState(confirmEnrolmentAction, initial);
  const [keyCodes, setKeyCodes] = useState<string[] | null>(null);
  const phoneEnrolment = usePhoneEnrolment();
  // A set-up cancelled here: its QR code is forgotten at once (the server removes the factor).
  const [cancelled, setCancelled] = useState<string | null>(null);
  if (confirmed.recoveryCodes) return <RecoveryCodes codes={confirmed.recoveryCodes} />;
  if (keyCodes) return <RecoveryCodes codes={keyCodes} />;
  const phoneCodes = phoneEnrolment.confirmed.recoveryCodes;
  if (phoneCodes) return <RecoveryCodes codes={phoneCodes} />;
  if (factor) {
    return (
      <div className="flex flex-col gap-4 sm:flex-row sm:items-center sm:justify-between">
        <p className="flex items-center gap-2 text-sm">
          <ShieldCheck aria-hidden="true" className="size-4 text-primary" />
          {factor.kind === 'webauthn'
            ? 'Security key'
            : factor.kind === 'phone'
              ? 'Phone'
              : 'Authenticator app'}
          , added <RelativeTime date={factor.createdAt} />
        </p>
        <RemoveAuthenticator factorId={factor.id} />
      </div>
    );
  }
  const enrolment = started.enrolment?.factorId === cancelled ? undefined : started.enrolment;
  if (!enrolment) {
    return (
      <div className="grid gap-4">
        <form action={start} className="grid gap-4">
          <FormError>{started.error}</FormError>
          <div>
            <SubmitButton pendingText="Starting…">Set up an authenticator app</SubmitButton>
          </div>
        </form>
        {securityKeys ? (
          <div className="grid gap-2 border-t pt-4">
            <p className="text-sm text-muted-foreground">
              Or use a security key (a USB or NFC key, or this device&apos;s screen lock) for the second step.
            </p>
            <AddSecurityKeyButton onRecoveryCodes={setKeyCodes} />
          </div>
        ) : null}
        {phones ? (
          <div className="grid gap-2 border-t pt-4">
            <h3 className="text-sm font-medium">Or add a phone as a second step</h3>
            <p className="text-sm text-muted-foreground">
              We text a code to your phone each time you sign in.
            </p>
            <AddPhoneFactor enrolment={phoneEnrolment} />
          </div>
        ) : null}
      </div>
    );
  }
  return (
    <div className="grid gap-6 sm:grid-cols-[auto_1fr] sm:items-start">
      <img
        src={enrolment.qrCode}
        alt="QR code to scan with your authenticator app"
        width={192}
        height={192}
        className="size-48 rounded-md border bg-white p-2"
      />
      <form action={confirm} className="grid max-w-md gap-4" noValidate>
        <FormError>{confirmed.error}</FormError>
        <ol className="list-decimal space-y-2 pl-5 text-sm">
          <li>Scan the QR code with your authenticator app.</li>
          <li>
            On this phone?{' '}
            <a className="font-medium underline" href={enrolment.uri}>
              Open it in your authenticator app
            </a>
            .
          </li>
          <li>
            Can&apos;t scan it? Enter this key instead:{' '}
            <code data-totp-secret="" className="rounded bg-muted px-1.5 py-0.5 font-mono break-all">
              {enrolment.secret}
            </code>
          </li>
          <li>Enter the 6-digit code the app shows.</li>
        </ol>
        <input type="hidden" name="factor_id" value={enrolment.factorId} />
        <Field
          label="Code from the app"
          name="code"
          inputMode="numeric"
          autoComplete="one-time-code"
          maxLength={7}
          required
          error={confirmed.fieldErrors?.code}
        />
        <div className="flex flex-wrap gap-2">
          <SubmitButton pendingText="Checking…">Turn on two-step verification</SubmitButton>
          <Button
            type="submit"
            variant="outline"
            formAction={async (form) => {
              setCancelled(enrolment.factorId);
              await cancelEnrolmentAction(form);
            }}
            formNoValidate
          >
            Cancel
          </Button>
        </div>
      </form>
    </div>
  );
}

export function NewRecoveryCodes() {
  const [state, action] = useActionState(newRecoveryCodesAction, initial);
  if (state.recoveryCodes) return <RecoveryCodes codes={state.recoveryCodes} />;
  return (
    <form action={action} className="grid gap-4">
      <FormError>{state.error}</FormError>
      <div>
        <SubmitButton variant="outline" pendingText="Making codes…">
          Make new recovery codes
        </SubmitButton>
      </div>
    </form>
  );
}

export function RemoveAuthenticator({ factorId }: { factorId: string }) {
  return (
    <ConfirmAction
      trigger={
        <Button variant="outline">
          <Trash2 aria-hidden="true" />
          Remove
        </Button>
      }
      title="Turn off two-step verification?"
      description="Signing in will only need your password, your recovery codes stop working, and workspaces that require two-step verification will be hidden from you until you set it up again."
      confirmLabel="Turn off"
      pendingLabel="Turning off…"
      action={removeFactorAction}
      fields={{ factor_id: factorId }}
    />
  );
}
