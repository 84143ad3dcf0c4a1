// The landing page: what Tenantry is and where to start.
import Link from 'next/link';

export default function HomePage() {
  return (
    <>
      <h1>Workspaces for your product, ready on day one</h1>
      <p className="muted">
        Sign-in, workspaces, members and roles, invitations, notification preferences, billing and activity
        digests, isolated per tenant by Postgres row-level security.
      </p>
      <p>
        <Link href="/sign-up" className="button">
          Create an account
        </Link>{' '}
        <Link href="/sign-in" className="button secondary">
          Sign in
        </Link>
      </p>
      <section className="card" aria-labelledby="apis">
        <h2 id="apis">For developers</h2>
        <p>
          The identity service answers at <code>/auth/v1</code> and the data API at <code>/rest/v1</code>;
          both speak the protocols of <code>@supabase/supabase-js</code>, so your client code works unchanged.
        </p>
      </section>
    </>
  );
}
