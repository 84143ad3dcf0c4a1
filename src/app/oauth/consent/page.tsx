// The OAuth consent page (decision 0093): an app registered with this instance asks to use the
// signed-in person's account. The page names the app (its name, logo and site), what it asks for,
// where the person goes next and what allowing means, with Allow and Deny. Signed-out visitors sign
// in first and come back here; a request already covered by an earlier consent goes straight
// back to the app; an unknown, expired or answered request says so.
import { ExternalLink, ShieldCheck } from 'lucide-react';
import Link from 'next/link';
import { notFound, redirect } from 'next/navigation';
import { Avatar } from '@/app/components/ui/avatar';
import { consentRequest, oauthServerEnabled } from '@/app/lib/queries/oauth';
import { requireUser } from '@/app/lib/session';
import { ConsentForm } from '@/app/oauth/consent/consent-form';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Allow access' };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What each scope lets the app see, in words; scopes the page does not know are shown as named. */
const SCOPE_WORDS: Record<string, string> = {
  openid: 'Confirm that it is you',
  email: 'See your e-mail address',
  profile: 'See your name and profile picture',
  phone: 'See your phone number',
};

function hostOf(uri: string): string | null {
  try {
    return new URL(uri).host;
  } catch {
    return null;
  }
}

export default async function ConsentPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  // no OAuth server on this instance, no consent page (OAUTH_SERVER_ENABLED)
  if (!oauthServerEnabled()) notFound();
  const { authorization_id: raw } = await searchParams;
  const id = typeof raw === 'string' && UUID.test(raw) ? raw.toLowerCase() : null;
  const user = await requireUser(id ? `/oauth/consent?authorization_id=${id}` : '/oauth/consent');
  const request = id ? await consentRequest(user, id) : null;
  if (request && 'redirect_url' in request) redirect(request.redirect_url);
  if (!request) {
    return (
      <div className="rounded-lg border bg-card p-6 text-center shadow-xs" data-consent-gone>
        <h1 className="text-xl font-semibold tracking-tight">This request is no longer valid</h1>
        <p className="mt-2 text-sm text-muted-foreground">
          It has expired, was already answered, or was opened by another account. Go back to the app and
          connect it again.
        </p>
        <p className="mt-6 text-sm">
          <Link className="font-medium underline" href="/workspaces">
            Go to your workspaces
          </Link>
        </p>
      </div>
    );
  }
  const name = request.client.name || 'An app';
  const site = request.client.uri ? hostOf(request.client.uri) : null;
  const returnsTo = hostOf(request.redirect_uri);
  const scopes = request.scope.split(' ').filter(Boolean);
  return (
    <div className="grid gap-6" data-consent>
      <div className="text-center">
        <Avatar
          name={name}
          seed={request.client.id}
          src={request.client.logo_uri || null}
          className="mx-auto mb-4 size-14 rounded-xl text-lg"
        />
        <h1 className="text-2xl font-semibold tracking-tight [overflow-wrap:anywhere]">
          {name} wants to use your account
        </h1>
        {site ? (
          <p className="mt-2 text-sm text-muted-foreground">
            <a
              className="inline-flex items-center gap-1 font-medium text-foreground underline"
              href={request.client.uri}
              target="_blank"
              rel="noopener noreferrer"
            >
              {site}
              <ExternalLink className="size-3.5" aria-hidden="true" />
              <span className="sr-only">(opens in a new tab)</span>
            </a>
          </p>
        ) : null}
      </div>
      <div className="grid gap-4 rounded-lg border bg-card p-6 shadow-xs">
        <p className="text-sm">
          Signed in as <span className="font-medium break-all">{user.email}</span>
        </p>
        <div>
          <h2 className="text-sm font-medium">It asks to</h2>
          <ul className="mt-2 grid gap-2" aria-label="What the app asks for">
            {scopes.map((scope) => (
              <li key={scope} className="flex items-start gap-2 text-sm" data-scope={scope}>
                <ShieldCheck className="mt-0.5 size-4 shrink-0 text-muted-foreground" aria-hidden="true" />
                <span className="[overflow-wrap:anywhere]">{SCOPE_WORDS[scope] ?? `Use “${scope}”`}</span>
              </li>
            ))}
          </ul>
        </div>
        <p className="text-sm text-muted-foreground">
          If you allow it, {name} can act as you: see and change what you can in your workspaces, until you
          disconnect it under Settings → Security.
          {returnsTo ? (
            <>
              {' '}
              You will then go back to <span className="font-medium text-foreground">{returnsTo}</span>.
            </>
          ) : null}
        </p>
        <ConsentForm authorizationId={request.authorization_id} appName={name} />
      </div>
    </div>
  );
}
