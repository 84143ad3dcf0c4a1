// The landing page: what Tenantry is and where to start. Someone signed in goes to their
// workspaces.
import { Building2, CreditCard, KeyRound, Mail, Newspaper, Users } from 'lucide-react';
import Link from 'next/link';
import { redirect } from 'next/navigation';
import { Logo } from '@/app/components/logo';
import { ThemeToggle } from '@/app/components/theme-toggle';
import { Button } from '@/app/components/ui/button';
import { currentUser } from '@/app/lib/session';
import { chosenTheme } from '@/app/lib/theme';

const FEATURES = [
  {
    icon: KeyRound,
    title: 'Sign-in and sessions',
    text: 'GoTrue-compatible, so supabase-js works unchanged.',
  },
  { icon: Building2, title: 'Workspaces', text: 'Every tenant isolated by Postgres row-level security.' },
  {
    icon: Users,
    title: 'Members and roles',
    text: 'Owner, admin, member, viewer; enforced in the database.',
  },
  { icon: Mail, title: 'Invitations', text: 'Links that work once, for the invited address only.' },
  { icon: CreditCard, title: 'Billing', text: 'Stripe Checkout, plans with seat and project limits.' },
  { icon: Newspaper, title: 'Digests', text: 'Daily or weekly activity e-mails, exactly once.' },
];

export default async function HomePage() {
  if (await currentUser()) redirect('/workspaces');
  const theme = await chosenTheme();
  return (
    <div className="flex min-h-dvh flex-col">
      <header className="mx-auto flex h-14 w-full max-w-6xl items-center justify-between gap-2 px-4 sm:px-6">
        <Link href="/" className="inline-flex h-11 items-center rounded-md px-1" aria-label="Tenantry home">
          <Logo />
        </Link>
        <div className="flex items-center gap-1">
          <ThemeToggle initial={theme} />
          <Button asChild variant="ghost" size="sm">
            <Link href="/sign-in">Sign in</Link>
          </Button>
        </div>
      </header>
      <main id="main" tabIndex={-1} className="mx-auto w-full max-w-6xl flex-1 px-4 outline-none sm:px-6">
        <section className="py-16 text-center sm:py-24">
          <h1 className="mx-auto max-w-3xl text-3xl font-semibold tracking-tight text-balance sm:text-5xl">
            Workspaces for your product, ready on day one
          </h1>
          <p className="mx-auto mt-5 max-w-2xl text-base text-pretty text-muted-foreground sm:text-lg">
            Sign-in, workspaces, members and roles, invitations, notification preferences, billing and
            activity digests, isolated per tenant by Postgres row-level security.
          </p>
          <div className="mt-8 flex flex-col justify-center gap-3 sm:flex-row">
            <Button asChild size="lg">
              <Link href="/sign-up">Create an account</Link>
            </Button>
            <Button asChild size="lg" variant="outline">
              <Link href="/sign-in">Sign in</Link>
            </Button>
          </div>
        </section>
        <section aria-labelledby="features" className="pb-16">
          <h2 id="features" className="sr-only">
            What you get
          </h2>
          <ul className="grid grid-cols-1 gap-4 sm:grid-cols-2 lg:grid-cols-3">
            {FEATURES.map(({ icon: Icon, title, text }) => (
              <li key={title} className="rounded-lg border bg-card p-5">
                <Icon className="size-5 text-primary" aria-hidden="true" />
                <h3 className="mt-3 text-sm font-semibold">{title}</h3>
                <p className="mt-1 text-sm text-muted-foreground">{text}</p>
              </li>
            ))}
          </ul>
          <div className="mt-8 rounded-lg border bg-card p-5 text-sm">
            <h3 className="font-semibold">For developers</h3>
            <p className="mt-1 text-muted-foreground">
              The identity service answers at <code>/auth/v1</code> and the data API at <code>/rest/v1</code>;
              both speak the protocols of <code>@supabase/supabase-js</code>, so your client code works
              unchanged.
            </p>
          </div>
        </section>
      </main>
    </div>
  );
}
