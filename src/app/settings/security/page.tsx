// The signed-in user's security settings: two-step verification with an authenticator app (set
// up with a QR code or the secret, confirmed with a first code, removed after asking) and the
// recovery codes that stand in for the app (shown once; new ones void the old); and where the
// account is signed in, with a sign-out for each other session or all of them.
import { PageHeader } from '@/app/components/page-header';
import { Badge } from '@/app/components/ui/badge';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { requireUser, services } from '@/app/lib/session';
import { NewRecoveryCodes, TwoStepSettings } from '@/app/settings/security/security-forms';
import { SessionsList } from '@/app/settings/security/sessions-list';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Security' };

export default async function SecurityPage() {
  const user = await requireUser('/settings/security');
  const { factors, recoveryCodesLeft } = await services().identity.factorsOf(user.userId);
  const factor = factors.find((f) => f.status === 'verified');
  const { sessions, total } = await services().identity.ownSessions(user.token);
  return (
    <>
      <PageHeader
        title="Security"
        description="Two-step verification asks for a code from your phone after your password."
      />
      <div className="grid grid-cols-1 gap-6">
        <Card aria-labelledby="two-step">
          <CardHeader>
            <CardTitle id="two-step" className="flex items-center gap-2">
              Two-step verification
              {factor ? <Badge>On</Badge> : <Badge variant="outline">Off</Badge>}
            </CardTitle>
            <CardDescription>
              {factor
                ? 'Signing in asks for a code from your authenticator app, or one of your recovery codes.'
                : 'Use an authenticator app (1Password, Google Authenticator, Authy, …) to make your account harder to break into. Some workspaces require it.'}
            </CardDescription>
          </CardHeader>
          <CardContent>
            <TwoStepSettings factor={factor ? { id: factor.id, createdAt: factor.created_at } : null} />
          </CardContent>
        </Card>
        {factor ? (
          <Card aria-labelledby="recovery-codes">
            <CardHeader>
              <CardTitle id="recovery-codes">Recovery codes</CardTitle>
              <CardDescription>
                Each one signs you in once without your phone. {recoveryCodesLeft} of 10 left. Making new ones
                stops the old ones from working.
              </CardDescription>
            </CardHeader>
            <CardContent>
              <NewRecoveryCodes />
            </CardContent>
          </Card>
        ) : null}
        <Card aria-labelledby="sessions">
          <CardHeader>
            <CardTitle id="sessions">Where you are signed in</CardTitle>
            <CardDescription>
              Sign out a browser you no longer use or do not recognise. Changing your password signs out every
              other session too.
            </CardDescription>
          </CardHeader>
          <CardContent>
            <SessionsList sessions={sessions} total={total} />
          </CardContent>
        </Card>
      </div>
    </>
  );
}
