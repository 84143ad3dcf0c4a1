// "Continue with <Provider>" buttons for the providers this service is configured with (none, no
// buttons), below the e-mail form after an "or" divider. Each is a form posted to a server action, so it works without
// client JavaScript; the button shows it is on its way while the provider's page is prepared.
import { providerSignInAction } from '@/app/actions/provider-sign-in';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { services } from '@/app/lib/session';

export function ProviderButtons({ next }: { next: string | null }) {
  const providers = services().identity.oauthProviders();
  if (providers.length === 0) return null;
  return (
    <div className="mt-6">
      <div className="mb-6 flex items-center gap-3 text-xs text-muted-foreground" aria-hidden="true">
        <span className="h-px flex-1 bg-border" />
        or
        <span className="h-px flex-1 bg-border" />
      </div>
      <ul className="grid grid-cols-1 gap-2" aria-label="Other ways to sign in">
        {providers.map((provider) => (
          <li key={provider.name}>
            <form action={providerSignInAction}>
              <input type="hidden" name="provider" value={provider.name} />
              <input type="hidden" name="next" value={next ?? ''} />
              <SubmitButton variant="outline" className="w-full" pendingText={`Opening ${provider.label}…`}>
                Continue with {provider.label}
              </SubmitButton>
            </form>
          </li>
        ))}
      </ul>
    </div>
  );
}
