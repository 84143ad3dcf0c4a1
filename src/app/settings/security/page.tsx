// The signed-in user's security settings: two-step verification with an authenticator app (set
// up with a QR code or the secret, confirmed with a first code, removed after asking) and the
// recovery codes that stand in for the app (shown once; new ones void the old); and where the
// account is signed in, with a sign-out for each other session or all of them. Passkeys: add one
// (the device asks for a fingerprint, face or PIN), see when each was last used, remove one; and a
// security key or a phone (a code by text message) instead of the app as the second step. With the
// OAuth server on, the apps allowed to use the account, each with a disconnect.
import { PageHeader } from '@/app/components/page-header';
import { Badge } from '@/app/components/ui/badge';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { AddPasskeyButton } from '@/app/components/passkey-buttons';
import { requireUser, services } from '@/app/lib/session';
import { NewRecoveryCodes, TwoStepSettings } from '@/app/settings/security/security-forms';
import { PasskeyList } from '@/app/settings/security/passkey-list';
import { RecentSecurityActivity } from '@/app/settings/security/recent-activity';
import { SessionsList } from '@/app/settings/security/sessions-list';
import { ConnectedApps } from '@/app/settings/security/connected-apps';
import { connectedApps, oauthServerEnabled } from '@/app/lib/queries/oauth';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Security' };

export default async function SecurityPage() {
  const user = await requireUser('/settings/security');
  const { factors, recoveryCodesLeft } = await services().identity.factorsOf(user.userId);
  const factor = factors.find((f) => f.status === 'verified');
  const { sessions, total } = await services().identity.ownSessions(user.token);
  const passkeysOn = services().identity.deps.passkeys.enabled;
  const passkeys = passkeysOn ? await services().identity.listPasskeys(user.token) : [];
  const apps = oauthServerEnabled() ? await connectedApps(user) : null;
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
                ? factor.factor_type === 'webauthn'
                  ? 'Signing in asks for your security key, or one of your recovery codes.'
                  : factor.factor_type === 'phone'
                    ? 'Signing in asks for a code we text to your phone, or one of your recovery codes.'
                    : 'Signing in asks for a code from your authenticator app, or one of your recovery codes.'
                : 'Use an authenticator app (1Password, Google Authenticator, Authy, …) to make your account harder to break into. Some workspaces require it.'}
            </CardDescription>
          </CardHeader>
          <CardContent>
            <TwoStepSettings
              factor={
                factor ? { id: factor.id, createdAt: factor.created_at, kind: factor.factor_type } : null
              }
              securityKeys={services().identity.deps.mfa.webauthnEnroll}
              phones={services().identity.deps.phone.sender !== null}
            />
          </CardContent>
        </Card>
        {passkeysOn ? (
          <Card aria-labelledby="passkeys">
            <CardHeader>
              <CardTitle id="passkeys">Passkeys</CardTitle>
              <CardDescription>
                Sign in with your fingerprint, face or device PIN instead of your password. A passkey stays on
                your device or in your password manager; it cannot be phished or reused on another site.
              </CardDescription>
            </CardHeader>
            <CardContent className="grid gap-4">
              <PasskeyList passkeys={passkeys} />
              <AddPasskeyButton />
            </CardContent>
          </Card>
        ) : null}
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
        {apps ? (
          <Card aria-labelledby="connected-apps">
            <CardHeader>
              <CardTitle id="connected-apps">Connected apps</CardTitle>
              <CardDescription>
                Apps you allowed to use your account. Each can act as you until you disconnect it.
              </CardDescription>
            </CardHeader>
            <CardContent>
              <ConnectedApps apps={apps} />
            </CardContent>
          </Card>
        ) : null}
        <RecentSecurityActivity user={user} />
      </div>
    </>
  );
}
