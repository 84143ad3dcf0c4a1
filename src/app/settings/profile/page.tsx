// The signed-in user's profile (display name, avatar URL) and password.
import { PageHeader } from '@/app/components/page-header';
import { Avatar } from '@/app/components/ui/avatar';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { myProfile } from '@/app/lib/queries/profile';
import { requireUser } from '@/app/lib/session';
import { PasswordForm, ProfileForm } from '@/app/settings/profile/profile-forms';
import { getRuntime } from '@/server/runtime';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Profile' };

export default async function ProfilePage() {
  const user = await requireUser('/settings/profile');
  const profile = await myProfile(user);
  const name = profile.displayName || profile.email;
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
          <CardContent>
            <ProfileForm profile={profile} />
          </CardContent>
        </Card>
        <Card aria-labelledby="password">
          <CardHeader>
            <CardTitle id="password">Password</CardTitle>
          </CardHeader>
          <CardContent>
            <PasswordForm minLength={getRuntime().config.minPasswordLength} />
          </CardContent>
        </Card>
      </div>
    </>
  );
}
