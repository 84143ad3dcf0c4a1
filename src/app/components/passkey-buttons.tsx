'use client';
// The buttons that run a WebAuthn ceremony in the browser (@simplewebauthn/browser): add a
// passkey, add a security key as the second step, sign in with a passkey, and use the security
// key at the second step. Each asks the server for options, lets the device answer, and sends the
// answer back; a cancelled prompt or a refusal is said beside the button, in words.
import { startAuthentication, startRegistration, WebAuthnError } from '@simplewebauthn/browser';
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/browser';
import { KeyRound, Plus } from 'lucide-react';
import { useRouter } from 'next/navigation';
import { useState, useTransition, type ReactNode } from 'react';
import {
  finishPasskeyRegistration,
  finishPasskeySignIn,
  finishSecondStepKey,
  finishSecurityKey,
  passkeyRegistrationOptions,
  passkeySignInOptions,
  secondStepKeyOptions,
  securityKeyOptions,
} from '@/app/actions/passkeys';
import { Button } from '@/app/components/ui/button';
import { FormError } from '@/app/components/ui/field';

/** The browser's refusal in words: the person cancelled, or the device cannot do it. */
function browserRefusal(error: unknown): string {
  if (error instanceof WebAuthnError && error.code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED') {
    return 'This device is already added';
  }
  if (error instanceof Error && (error.name === 'NotAllowedError' || error.name === 'AbortError')) {
    return 'Nothing was added: the request was cancelled or timed out';
  }
  return 'This browser or device could not do that; try another one';
}

function useCeremony() {
  const [error, setError] = useState<string | undefined>();
  const [pending, startTransition] = useTransition();
  const run = (work: () => Promise<string | undefined>) => {
    setError(undefined);
    startTransition(async () => {
      try {
        setError(await work());
      } catch (caught) {
        // A redirect from the server action is not an error: rethrow it for Next.js.
        if (
          caught instanceof Error &&
          'digest' in caught &&
          String(caught.digest).startsWith('NEXT_REDIRECT')
        ) {
          throw caught;
        }
        setError(browserRefusal(caught));
      }
    });
  };
  return { error, pending, run };
}

/**
 * One ceremony's button: `ceremony` runs it and answers the refusal to show, if any. `wide` fills
 * a sign-in card's width; otherwise the button keeps its own width on a settings page.
 */
function CeremonyButton({
  icon,
  label,
  waiting,
  variant,
  wide = false,
  ceremony,
}: {
  icon: ReactNode;
  label: string;
  /** said on the button while the device is asked */
  waiting: string;
  variant?: 'outline';
  wide?: boolean;
  ceremony: () => Promise<string | undefined>;
}) {
  const { error, pending, run } = useCeremony();
  const button = (
    <Button
      type="button"
      {...(variant ? { variant } : {})}
      {...(wide ? { className: 'w-full' } : {})}
      disabled={pending}
      onClick={() => run(ceremony)}
    >
      {icon}
      {pending ? waiting : label}
    </Button>
  );
  return (
    <div className="grid gap-2">
      <FormError>{error}</FormError>
      {wide ? button : <div>{button}</div>}
    </div>
  );
}

export function AddPasskeyButton() {
  const router = useRouter();
  return (
    <CeremonyButton
      icon={<Plus aria-hidden="true" />}
      label="Add a passkey"
      waiting="Waiting for your device…"
      ceremony={async () => {
        const started = await passkeyRegistrationOptions();
        if ('error' in started) return started.error;
        const answer = await startRegistration({
          optionsJSON: started.options as PublicKeyCredentialCreationOptionsJSON,
        });
        const done = await finishPasskeyRegistration(started.challengeId, answer);
        if (!done.error) router.refresh();
        return done.error;
      }}
    />
  );
}

/** `onRecoveryCodes` gets the codes made with the key, for a parent that outlives the page's refresh. */
export function AddSecurityKeyButton({ onRecoveryCodes }: { onRecoveryCodes: (codes: string[]) => void }) {
  return (
    <CeremonyButton
      icon={<KeyRound aria-hidden="true" />}
      label="Use a security key instead"
      waiting="Waiting for your key…"
      variant="outline"
      ceremony={async () => {
        const started = await securityKeyOptions();
        if ('error' in started) return started.error;
        const answer = await startRegistration({
          optionsJSON: started.options as PublicKeyCredentialCreationOptionsJSON,
        });
        const done = await finishSecurityKey(started.factorId!, started.challengeId, answer);
        if (done.recoveryCodes) onRecoveryCodes(done.recoveryCodes);
        return done.error;
      }}
    />
  );
}

export function PasskeySignInButton({ next }: { next: string | null }) {
  return (
    <CeremonyButton
      icon={<KeyRound aria-hidden="true" />}
      label="Sign in with a passkey"
      waiting="Waiting for your passkey…"
      variant="outline"
      wide
      ceremony={async () => {
        const started = await passkeySignInOptions();
        if ('error' in started) return started.error;
        const answer = await startAuthentication({
          optionsJSON: started.options as PublicKeyCredentialRequestOptionsJSON,
        });
        return (await finishPasskeySignIn(started.challengeId, answer, next)).error;
      }}
    />
  );
}

export function SecurityKeyStepButton({ next }: { next: string | null }) {
  return (
    <CeremonyButton
      icon={<KeyRound aria-hidden="true" />}
      label="Use your security key"
      waiting="Waiting for your key…"
      wide
      ceremony={async () => {
        const started = await secondStepKeyOptions();
        if ('error' in started) return started.error;
        const answer = await startAuthentication({
          optionsJSON: started.options as PublicKeyCredentialRequestOptionsJSON,
        });
        return (await finishSecondStepKey(started.factorId!, started.challengeId, answer, next)).error;
      }}
    />
  );
}
