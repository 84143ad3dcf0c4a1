// The user's passkeys on the security page: each one's name, when it was added and last used, and
// a remove button that asks first.
import { KeyRound, Trash2 } from 'lucide-react';
import { removePasskeyAction } from '@/app/actions/passkeys';
import { ConfirmAction } from '@/app/components/confirm-action';
import { RelativeTime } from '@/app/components/relative-time';
import { Button } from '@/app/components/ui/button';

export interface PasskeyItem {
  id: string;
  friendly_name?: string;
  created_at: string;
  last_used_at?: string;
}

export function PasskeyList({ passkeys }: { passkeys: PasskeyItem[] }) {
  if (passkeys.length === 0) {
    return <p className="text-sm text-muted-foreground">No passkeys yet.</p>;
  }
  return (
    <ul aria-label="Your passkeys" className="divide-y rounded-md border">
      {passkeys.map((p) => (
        <li
          key={p.id}
          data-passkey={p.id}
          className="flex flex-col gap-3 p-4 sm:flex-row sm:items-center sm:justify-between"
        >
          <div className="flex min-w-0 items-start gap-3">
            <KeyRound aria-hidden="true" className="mt-0.5 size-4 shrink-0 text-primary" />
            <div className="min-w-0 text-sm">
              <p className="font-medium break-words">{p.friendly_name || 'Passkey'}</p>
              <p className="text-muted-foreground">
                Added <RelativeTime date={p.created_at} />
                {' · '}
                {p.last_used_at ? (
                  <>
                    last used <RelativeTime date={p.last_used_at} />
                  </>
                ) : (
                  'not used yet'
                )}
              </p>
            </div>
          </div>
          <ConfirmAction
            trigger={
              <Button variant="outline" size="sm" aria-label={`Remove ${p.friendly_name || 'passkey'}`}>
                <Trash2 aria-hidden="true" />
                Remove
              </Button>
            }
            title="Remove this passkey?"
            description="You will no longer be able to sign in with it. Your password and other passkeys keep working."
            confirmLabel="Remove"
            pendingLabel="Removing…"
            action={removePasskeyAction}
            fields={{ passkey_id: p.id }}
          />
        </li>
      ))}
    </ul>
  );
}
