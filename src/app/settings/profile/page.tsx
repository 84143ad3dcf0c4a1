// The signed-in user's profile (display name, profile picture), e-mail address and password, and
// deleting the account.
import { randomUUID } from 'node:crypto';
import { PageHeader } from '@/app/components/page-header';
import { Avatar } from '@/app/components/ui/avatar';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { myProfile } from '@/app/lib/queries/profile';
import { AvatarSettings } from '@/app/settings/profile/avatar-settings';
import { requireUser, services } from '@/app/lib/session';
import {
  DeleteAccountForm,
  EmailForm,
  PasswordForm,
  ProfileForm,
} from '@/app/settings/profile/profile-forms';
import { getRuntime } from '@/server/runtime';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Profile' };

export default async function ProfilePage() {
  const user = await requireUser('/settings/profile');
  const profile = await myProfile(user);
  const name = profile.displayName || profile.email;
  // The address from the account itself: a token issued before a change still names the old one.
  const account = await services().identity.accountSettings(user.token);
  const email = account.email ?? user.email;
  return (
    <>
      <PageHeader title="Profile" description="How you appear to your teammates, and how you sign in." />
      <div className="grid grid-cols-1 gap-6">
        <Card aria-labelledby="about">
          <CardHeader className="flex-row items-center gap-4">
            <Avatar name={name} seed={user.userId} src={profile.avatarUrl} className="size-12 text-base" />
            <div className="min-w-0">
              <CardTitle id="about" className="truncate">
                {name}
              </CardTitle>
              <CardDescription className="truncate">Signed in as {profile.email}</CardDescription>
            </div>
          </CardHeader>
          <CardContent className="grid gap-6">
            <AvatarSettings
              hasPicture={Boolean(profile.avatarPath || profile.avatarUrl)}
              maxBytes={getRuntime().config.appFiles.pictureMaxBytes}
            />
            <ProfileForm profile={profile} />
          </CardContent>
        </Card>
        <Card aria-labelledby="email-address">
          <CardHeader>
            <CardTitle id="email-address">E-mail address</CardTitle>
            <CardDescription>You sign in with {email}.</CardDescription>
          </CardHeader>
          <CardContent>
            <EmailForm
              email={email}
              pending={account.pendingEmail}
              confirmsBothAddresses={account.confirmsBothAddresses}
            />
          </CardContent>
        </Card>
        <Card aria-labelledby="password">
          <CardHeader>
            <CardTitle id="password">Password</CardTitle>
          </CardHeader>
          <CardContent>
            {/* A new key each time the page is rendered: a changed password (which comes back here)
                clears the fields, while a refusal, answered without rendering the page, keeps them. */}
            <PasswordForm key={randomUUID()} minLength={getRuntime().config.minPasswordLength} />
          </CardContent>
        </Card>
        <Card aria-labelledby="delete-account" className="border-destructive/50">
          <CardHeader>
            <CardTitle id="delete-account">Delete account</CardTitle>
            <CardDescription>
              Your account and your sign-in go for good, and you leave every workspace. Workspaces where you
              are the only member are deleted with it. If you are the last owner of a team, make someone else
              owner first.
            </CardDescription>
          </CardHeader>
          <CardContent>
            <DeleteAccountForm email={email} hasPassword={account.hasPassword} />
          </CardContent>
        </Card>
      </div>
    </>
  );
}
