// Where a reset or sign-in link lands when it is opened in a browser other than the one that asked
// for it (the e-mail read on a phone, asked for on a laptop). That link's code is bound to the
// other browser, so it cannot sign anyone in here; instead of a dead end, the page names the
// address and offers a fresh link and code that work here. Nothing is sent until the person asks.
import Link from 'next/link';
import { ResendStrandedLinkForm } from '@/app/auth/other-browser/resend-form';
import { localPath } from '@/app/lib/redirect-target';
import { services } from '@/app/lib/session';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Link opened in another browser' };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export default async function OtherBrowserPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { code, next: requested } = await searchParams;
  const next = localPath(typeof requested === 'string' ? requested : null);
  const stranded =
    typeof code === 'string' && UUID.test(code) ? await services().identity.strandedCode(code) : null;
  const resendable =
    stranded?.email &&
    (stranded.authenticationMethod === 'recovery' || stranded.authenticationMethod === 'magiclink');
  return (
    <>
      <div className="mb-8 text-center">
        <h1 className="text-2xl font-semibold tracking-tight">This link was asked for in another browser</h1>
        <p className="mt-2 text-sm text-muted-foreground">
          For your safety, an e-mailed link only works in the browser where you asked for it.
        </p>
      </div>
      <div className="rounded-lg border bg-card p-6 shadow-xs">
        {resendable ? (
          <ResendStrandedLinkForm
            code={code as string}
            email={stranded.email!}
            kind={stranded.authenticationMethod === 'recovery' ? 'recovery' : 'magiclink'}
            next={next}
          />
        ) : (
          <div className="grid gap-4 text-center" data-link-expired>
            <p className="text-sm">
              That link has expired. Ask for a new one here, and open it in this browser.
            </p>
            <div className="flex flex-wrap justify-center gap-3">
              <Link className="font-medium underline" href="/forgot-password">
                Reset your password
              </Link>
              <Link className="font-medium underline" href="/sign-in/email">
                Sign in with e-mail
              </Link>
            </div>
          </div>
        )}
      </div>
      <p className="mt-6 text-center text-sm text-muted-foreground">
        <Link className="font-medium text-foreground underline" href="/sign-in">
          Back to sign in
        </Link>
      </p>
    </>
  );
}
