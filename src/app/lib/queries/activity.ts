// In charge of a workspace's activity feed for its overview page: the events a page at a time,
// newest first, each told as a sentence ("Grace changed Ada's role to admin", "renamed Apollo to
// Artemis"), with the people in it named, also after they left the workspace.
import { asUser } from '@/app/lib/db';
import { APP_BUCKETS, readableUrls } from '@/app/lib/files';
import { paged, pageWindow, type PageRequest, type Paged } from '@/app/lib/paging';
import type { SignedIn } from '@/app/lib/session';

export interface ActivityEvent {
  id: string;
  action: string;
  subject: string | null;
  data: Record<string, unknown>;
  createdAt: Date;
  actorId: string | null;
  /** the subject's name before this event, for renames */
  previousSubject: string | null;
}

export interface ActivityItem {
  id: string;
  createdAt: Date;
  actorId: string | null;
  /** "You" for the viewer */
  actor: string;
  /** the actor's own name, for the avatar */
  actorName: string;
  /** the actor's picture, when they have one the viewer may see */
  actorPicture: string | null;
  sentence: string;
}

export const ACTIVITY_PAGE_SIZE = 20;

type Names = Map<string, string>;

const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);

/** One event as a sentence that follows the actor's name (pure; the page adds the actor). */
export function describe(event: ActivityEvent, names: Names, viewerId: string): string {
  const d = event.data;
  const person = (id: unknown, fallback: string | null): string => {
    const key = str(id);
    if (key && key === viewerId) return 'you';
    return (key && names.get(key)) || fallback || 'a former member';
  };
  const possessive = (who: string) => (who === 'you' ? 'your' : `${who}’s`);
  const subject = event.subject ?? '';
  switch (event.action) {
    case 'workspace.created':
      return `created the workspace ${subject}`;
    case 'workspace.updated': {
      const renamed = str(d.old_name) && str(d.old_name) !== str(d.name);
      const moved = str(d.old_slug) && str(d.old_slug) !== str(d.slug);
      if (renamed && moved)
        return `renamed the workspace ${str(d.old_name)} to ${str(d.name)} and moved it to /${str(d.slug)}`;
      if (renamed) return `renamed the workspace ${str(d.old_name)} to ${str(d.name)}`;
      if (moved) return `changed the workspace address from /${str(d.old_slug)} to /${str(d.slug)}`;
      return 'updated the workspace settings';
    }
    case 'member.added':
      if (str(d.user_id) && str(d.user_id) === event.actorId) return `joined as ${str(d.role) ?? 'member'}`;
      return `added ${person(d.user_id, subject)} as ${str(d.role) ?? 'member'}`;
    case 'member.role_changed':
      return `changed ${possessive(person(d.user_id, subject))} role from ${str(d.old_role)} to ${str(d.role)}`;
    case 'member.removed':
      return `removed ${person(d.user_id, subject)} from the workspace`;
    case 'member.left':
      return 'left the workspace';
    case 'invitation.created':
      return `invited ${subject} as ${str(d.role) ?? 'member'}`;
    case 'invitation.accepted':
      return `accepted the invitation${str(d.role) ? ` and joined as ${str(d.role)}` : ''}`;
    case 'invitation.revoked':
      return `revoked the invitation for ${subject}`;
    case 'invitation.declined':
      return 'declined the invitation';
    case 'invitation.resent':
      return `sent the invitation for ${subject} again`;
    case 'project.created':
      return `created the project ${subject}`;
    case 'project.updated':
      return event.previousSubject && event.previousSubject !== subject
        ? `renamed the project ${event.previousSubject} to ${subject}`
        : `updated the project ${subject}`;
    case 'project.deleted':
      return `deleted the project ${subject}`;
    default:
      return appActivitySentence(event.action, subject);
  }
}

/** One page of the workspace's events (not counted: the log only grows, and nobody reads its end). */
export async function recentActivity(
  user: SignedIn,
  workspaceId: string,
  request: PageRequest,
): Promise<Paged<ActivityItem>> {
  const { limit, offset } = pageWindow(request, ACTIVITY_PAGE_SIZE);
  const page = await asUser(user, async (tx) => {
    const rows = (
      await tx.query<ActivityEvent>(
        `select e.id::text, e.action, e.subject, e.data, e.created_at as "createdAt", e.actor_id as "actorId",
                case when e.action = 'project.updated' then (
                  select prev.subject from public.activity_events prev
                  where prev.workspace_id = e.workspace_id and prev.data ->> 'project_id' = e.data ->> 'project_id'
                    and prev.action in ('project.created', 'project.updated')
                    and (prev.created_at, prev.id) < (e.created_at, e.id)
                  order by prev.created_at desc, prev.id desc limit 1) end as "previousSubject"
         from public.activity_events e
         where e.workspace_id = $1 order by e.created_at desc, e.id desc limit $2 offset $3`,
        [workspaceId, limit, offset],
      )
    ).rows;
    const events = rows.slice(0, ACTIVITY_PAGE_SIZE);
    const ids = new Set<string>();
    for (const e of events) {
      if (e.actorId) ids.add(e.actorId);
      const about = str(e.data.user_id);
      if (about) ids.add(about);
    }
    const names: Names = new Map();
    if (ids.size > 0) {
      const r = await tx.query<{ id: string; name: string }>(
        'select id, name from internal.activity_people($1, $2::uuid[])',
        [workspaceId, [...ids]],
      );
      for (const row of r.rows) names.set(row.id, row.name);
    }
    // Pictures of the actors whose profiles the viewer may read (row-level security decides).
    const actors = [...new Set(events.map((e) => e.actorId).filter((id): id is string => Boolean(id)))];
    const avatars = new Map<string, string>();
    if (actors.length > 0) {
      const r = await tx.query<{ id: string; path: string }>(
        'select id, avatar_path as path from public.profiles where id = any ($1::uuid[]) and avatar_path is not null',
        [actors],
      );
      for (const row of r.rows) avatars.set(row.id, row.path);
    }
    const items = events.map((e) => ({
      id: e.id,
      createdAt: e.createdAt,
      actorId: e.actorId,
      actor:
        e.actorId === user.userId
          ? 'You'
          : (e.actorId && names.get(e.actorId)) ||
            (e.action.startsWith('invitation.') && e.subject) ||
            'Someone',
      actorName:
        (e.actorId && names.get(e.actorId)) || (e.action.startsWith('invitation.') && e.subject) || 'Someone',
      sentence: describe(e, names, user.userId),
      actorPicture: (e.actorId && avatars.get(e.actorId)) || null,
    }));
    // The extra row read says whether an older page exists; it is not shown.
    return { items, hasNext: rows.length > ACTIVITY_PAGE_SIZE };
  });
  const pictures = await readableUrls(
    user,
    APP_BUCKETS.avatars,
    page.items.map((i) => i.actorPicture),
  );
  const items = page.items.map((i) => ({
    ...i,
    actorPicture: i.actorPicture ? (pictures.get(i.actorPicture) ?? null) : null,
  }));
  return { ...paged(items, request, ACTIVITY_PAGE_SIZE), hasNext: page.hasNext };
}

/**
 * An entry of a team's own table (tenantry.record_activity: task.created and the like) as a
 * sentence, "created the task Write the guide"; any other action as its words.
 */
export function appActivitySentence(action: string, subject: string | null): string {
  const match = /^([a-z][a-z0-9_]*)\.(created|updated|deleted)$/.exec(action);
  const verb = match ? `${match[2]} the ${match[1]!.replace(/_/g, ' ')}` : action.replace(/[._]/g, ' ');
  return subject ? `${verb} ${subject}` : verb;
}
