// Members and invitations of a workspace, each a page at a time and searchable by name or e-mail.
// Everyone sees the members, "you" marked; admins and owners also get the controls they may use:
// roles up to their own, never on an owner unless they are one, never on the last owner; removal;
// invitations with their state.
import { Clock } from 'lucide-react';
import { PageHeader } from '@/app/components/page-header';
import { hrefWith, Pager } from '@/app/components/pager';
import { SearchForm } from '@/app/components/search-form';
import { RelativeTime } from '@/app/components/relative-time';
import { Avatar } from '@/app/components/ui/avatar';
import { Badge } from '@/app/components/ui/badge';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { requireWorkspace } from '@/app/lib/db';
import { paged, pageRequest } from '@/app/lib/paging';
import { allowedControls, invitableRoles, listInvitations, listMembers } from '@/app/lib/queries/members';
import { workspaceTitle } from '@/app/lib/titles';
import { JoinRequests } from '@/app/w/[slug]/members/join-requests';
import { count } from '@/server/text/counts';
import {
  InvitationActions,
  InviteForm,
  LeaveWorkspace,
  RemoveMember,
  RoleMenu,
} from '@/app/w/[slug]/members/member-controls';

export const dynamic = 'force-dynamic';

type Params = { params: Promise<{ slug: string }> };
type Props = Params & { searchParams: Promise<Record<string, string | string[] | undefined>> };

export const generateMetadata = ({ params }: Params) => workspaceTitle(params, 'Members');

export default async function MembersPage({ params, searchParams }: Props) {
  const { user, workspace } = await requireWorkspace(params, '/members');
  const manage = workspace.role === 'admin' || workspace.role === 'owner';
  const query = await searchParams;
  const membersAsked = pageRequest(query);
  const invitationsAsked = pageRequest(query, { page: 'ipage', q: 'iq' });
  const [memberPage, invitationPage] = await Promise.all([
    listMembers(user, workspace.id, membersAsked),
    manage
      ? listInvitations(user, workspace.id, invitationsAsked)
      : Promise.resolve(paged([], invitationsAsked, 1, 0)),
  ]);
  const members = memberPage.items;
  const invitations = invitationPage.items;
  const owners = memberPage.owners;
  const viewer = { userId: user.userId, role: workspace.role };
  const lastOwner = workspace.role === 'owner' && owners < 2;
  const path = `/w/${workspace.slug}/members`;
  const keep = (names: string[]) =>
    Object.fromEntries(
      names.flatMap((n) => {
        const v = query[n];
        return typeof v === 'string' && v ? [[n, v]] : [];
      }),
    );
  return (
    <>
      <PageHeader
        title="Members"
        description={`${count(memberPage.everyone, 'member')} of ${workspace.name}`}
      />
      {manage ? <JoinRequests user={user} workspace={workspace} /> : null}
      <div className="grid grid-cols-1 gap-6">
        {manage ? (
          <Card aria-labelledby="invite">
            <CardHeader>
              <CardTitle id="invite">Invite someone</CardTitle>
              <CardDescription>
                They get an e-mail with a link that works once, for that address, for 7 days.
              </CardDescription>
            </CardHeader>
            <CardContent>
              <InviteForm
                slug={workspace.slug}
                workspaceId={workspace.id}
                roles={invitableRoles(workspace.role)}
              />
            </CardContent>
          </Card>
        ) : null}
        <Card aria-labelledby="members">
          <CardHeader>
            <CardTitle id="members">People</CardTitle>
            {membersAsked.q ? (
              <CardDescription>
                {memberPage.total} matching “{membersAsked.q}”
              </CardDescription>
            ) : null}
          </CardHeader>
          {membersAsked.q || memberPage.page > 1 || memberPage.hasNext ? (
            <div className="px-5 pt-4 sm:px-6">
              <SearchForm
                id="member-search"
                path={path}
                name="q"
                value={membersAsked.q}
                label="Search members by name or e-mail"
                placeholder="Search members"
                keep={keep(['ipage', 'iq'])}
                clearHref={hrefWith(path, query, { q: null, page: null })}
              />
            </div>
          ) : null}
          <CardContent className="px-0 sm:px-0">
            {members.length === 0 ? (
              <p role="status" className="border-t px-5 py-6 text-sm text-muted-foreground sm:px-6">
                Nobody here matches “{membersAsked.q}”.
              </p>
            ) : null}
            <ul aria-label="Members" className="divide-y border-t empty:hidden">
              {members.map((m) => {
                const name = m.displayName || m.email;
                const you = m.userId === user.userId;
                const controls = allowedControls(viewer, m, owners);
                return (
                  <li
                    key={m.userId}
                    data-member={m.email}
                    className="flex flex-wrap items-center gap-x-3 gap-y-2 px-5 py-3 sm:px-6"
                  >
                    <Avatar name={name} seed={m.userId} src={m.avatarUrl} />
                    <span className="min-w-0 flex-1">
                      <span className="flex items-center gap-2 text-sm font-medium">
                        <span className="truncate">{name}</span>
                        {you ? <Badge variant="primary">you</Badge> : null}
                      </span>
                      <span className="block truncate text-xs text-muted-foreground">
                        {m.displayName ? `${m.email} · ` : ''}joined <RelativeTime date={m.joinedAt} />
                      </span>
                    </span>
                    <span className="ml-auto flex items-center gap-1">
                      {controls.roles.length > 0 ? (
                        <RoleMenu
                          slug={workspace.slug}
                          workspaceId={workspace.id}
                          member={{ userId: m.userId, email: m.email, name, role: m.role }}
                          roles={controls.roles}
                        />
                      ) : (
                        <Badge variant={m.role === 'owner' ? 'primary' : 'default'} className="capitalize">
                          {m.role}
                        </Badge>
                      )}
                      {controls.remove ? (
                        <RemoveMember
                          slug={workspace.slug}
                          workspaceId={workspace.id}
                          member={{ userId: m.userId, email: m.email, name }}
                          workspaceName={workspace.name}
                        />
                      ) : null}
                    </span>
                  </li>
                );
              })}
            </ul>
            <Pager
              label="Members"
              result={memberPage}
              href={(n) => hrefWith(path, query, { page: n })}
              className="border-t px-5 pt-4 sm:px-6"
            />
          </CardContent>
        </Card>
        {manage ? (
          <Card aria-labelledby="pending">
            <CardHeader>
              <CardTitle id="pending">Pending invitations</CardTitle>
              <CardDescription>
                {invitationsAsked.q
                  ? `${invitationPage.total} matching “${invitationsAsked.q}”.`
                  : invitations.length === 0
                    ? 'Nobody is waiting to join.'
                    : 'Invited people count towards the seats of the plan until they answer.'}
              </CardDescription>
            </CardHeader>
            {invitationsAsked.q || invitationPage.page > 1 || invitationPage.hasNext ? (
              <div className="px-5 pt-4 pb-4 sm:px-6">
                <SearchForm
                  id="invitation-search"
                  path={path}
                  name="iq"
                  value={invitationsAsked.q}
                  label="Search pending invitations by e-mail"
                  placeholder="Search invitations"
                  keep={keep(['page', 'q'])}
                  clearHref={hrefWith(path, query, { iq: null, ipage: null })}
                />
              </div>
            ) : null}
            {invitations.length > 0 ? (
              <CardContent className="px-0 sm:px-0">
                <ul aria-label="Pending invitations" className="divide-y border-t">
                  {invitations.map((i) => (
                    <li
                      key={i.id}
                      data-invitation={i.email}
                      className="flex flex-wrap items-center gap-x-3 gap-y-2 px-5 py-3 sm:px-6"
                    >
                      <span className="inline-flex size-8 shrink-0 items-center justify-center rounded-full border border-dashed">
                        <Clock className="size-4 text-muted-foreground" aria-hidden="true" />
                      </span>
                      <span className="min-w-0 flex-1 basis-48">
                        <span className="flex flex-wrap items-center gap-2 text-sm font-medium">
                          <span className="min-w-0 [overflow-wrap:anywhere]" data-invitation-email>
                            {i.email}
                          </span>
                          <Badge className="capitalize">{i.role}</Badge>
                          {i.status === 'expired' ? (
                            <Badge variant="danger">Expired</Badge>
                          ) : (
                            <Badge variant="warning">Pending</Badge>
                          )}
                        </span>
                        <span className="block text-xs text-muted-foreground">
                          Invited <RelativeTime date={i.createdAt} />
                          {i.invitedBy ? ` by ${i.invitedBy}` : ''} ·{' '}
                          {i.status === 'expired' ? 'expired ' : 'expires '}
                          <RelativeTime date={i.expiresAt} />
                        </span>
                      </span>
                      <InvitationActions slug={workspace.slug} invitation={{ id: i.id, email: i.email }} />
                    </li>
                  ))}
                </ul>
                <Pager
                  label="Invitations"
                  result={invitationPage}
                  href={(n) => hrefWith(path, query, { ipage: n })}
                  className="border-t px-5 pt-4 sm:px-6"
                />
              </CardContent>
            ) : null}
          </Card>
        ) : null}
        <Card aria-labelledby="leave">
          <CardHeader>
            <CardTitle id="leave">Leave workspace</CardTitle>
            <CardDescription>Stop being a member of {workspace.name}.</CardDescription>
          </CardHeader>
          <CardContent>
            <LeaveWorkspace
              slug={workspace.slug}
              workspaceId={workspace.id}
              workspaceName={workspace.name}
              lastOwner={lastOwner}
            />
          </CardContent>
        </Card>
      </div>
    </>
  );
}
