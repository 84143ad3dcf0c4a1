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
import { useState, useTransition } from 'react';
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

export function AddPasskeyButton() {
  const router = useRouter();
  const { error, pending, run } = useCeremony();
  return (
    <div className="grid gap-2">
      <FormError>{error}</FormError>
      <div>
        <Button
          type="button"
          disabled={pending}
          onClick={() =>
            run(async () => {
              const started = await passkeyRegistrationOptions();
              if ('error' in started) return started.error;
              const answer = await startRegistration({
                optionsJSON: started.options as PublicKeyCredentialCreationOptionsJSON,
              });
              const done = await finishPasskeyRegistration(started.challengeId, answer);
              if (!done.error) router.refresh();
              return done.error;
            })
          }
        >
          <Plus aria-hidden="true" />
          {pending ? 'Waiting for your device…' : 'Add a passkey'}
        </Button>
      </div>
    </div>
  );
}

/** `onRecoveryCodes` gets the codes made with the key, for a parent that outlives the page's refresh. */
export function AddSecurityKeyButton({ onRecoveryCodes }: { onRecoveryCodes: (codes: string[]) => void }) {
  const { error, pending, run } = useCeremony();
  return (
    <div className="grid gap-2">
      <FormError>{error}</FormError>
      <div>
        <Button
          type="button"
          variant="outline"
          disabled={pending}
          onClick={() =>
            run(async () => {
              const started = await securityKeyOptions();
              if ('error' in started) return started.error;
              const answer = await startRegistration({
                optionsJSON: started.options as PublicKeyCredentialCreationOptionsJSON,
              });
              const done = await finishSecurityKey(started.factorId!, started.challengeId, answer);
              if (done.recoveryCodes) onRecoveryCodes(done.recoveryCodes);
              return done.error;
            })
          }
        >
          <KeyRound aria-hidden="true" />
          {pending ? 'Waiting for your key…' : 'Use a security key instead'}
        </Button>
      </div>
    </div>
  );
}

export function PasskeySignInButton({ next }: { next: string | null }) {
  const { error, pending, run } = useCeremony();
  return (
    <div className="grid gap-2">
      <FormError>{error}</FormError>
      <Button
        type="button"
        variant="outline"
        className="w-full"
        disabled={pending}
        onClick={() =>
          run(async () => {
            const started = await passkeySignInOptions();
            if ('error' in started) return started.error;
            const answer = await startAuthentication({
              optionsJSON: started.options as PublicKeyCredentialRequestOptionsJSON,
            });
            return (await finishPasskeySignIn(started.challengeId, answer, next)).error;
          })
        }
      >
        <KeyRound aria-hidden="true" />
        {pending ? 'Waiting for your passkey…' : 'Sign in with a passkey'}
      </Button>
    </div>
  );
}

export function SecurityKeyStepButton({ next }: { next: string | null }) {
  const { error, pending, run } = useCeremony();
  return (
    <div className="grid gap-2">
      <FormError>{error}</FormError>
      <Button
        type="button"
        className="w-full"
        disabled={pending}
        onClick={() =>
          run(async () => {
            const started = await secondStepKeyOptions();
            if ('error' in started) return started.error;
            const answer = await startAuthentication({
              optionsJSON: started.options as PublicKeyCredentialRequestOptionsJSON,
            });
            return (await finishSecondStepKey(started.factorId!, started.challengeId, answer, next)).error;
          })
        }
      >
        <KeyRound aria-hidden="true" />
        {pending ? 'Waiting for your key…' : 'Use your security key'}
      </Button>
    </div>
  );
}
