// In charge of the digest e-mail itself: per workspace, what happened (counts per kind of change,
// in words with their plurals right, and the latest items told as sentences), links into the
// app, plain-text and HTML parts (the HTML in the product's e-mail layout, digest-mail.tsx), and
// the one-click unsubscribe link and headers (RFC 8058). People are named one way throughout: by
// display name, else by e-mail address, and the reader as "you". Pure: data in, message out.
import { renderDigestHtml } from './digest-mail.js';
import { count } from '../text/counts.js';

export interface DigestItem {
  action: string;
  subject: string | null;
  /** who did it: display name, else e-mail (null once their account is gone) */
  actor: string | null;
  actorId?: string | null;
  /** whom a member or invitation event is about, named like an actor, when they have an account */
  about?: string | null;
  aboutId?: string | null;
  role?: string | null;
  oldRole?: string | null;
  at: string;
}

export interface WorkspaceDigest {
  workspaceId: string;
  name: string;
  slug: string;
  total: number;
  counts: Record<string, number>;
  latest: DigestItem[];
}

export interface DigestInput {
  frequency: 'daily' | 'weekly';
  /** the reader's user id, so events about them say "you" */
  recipientId?: string;
  recipientName: string | null;
  productName?: string;
  workspaces: WorkspaceDigest[];
  appUrl: string;
  unsubscribeUrl: string;
}

export interface ComposedMail {
  subject: string;
  text: string;
  html: string;
  headers: Record<string, string>;
}

/** What a count of each kind of change reads as: [one, several]. */
const COUNT_NOUNS: Record<string, [string, string]> = {
  'workspace.created': ['workspace created', 'workspaces created'],
  'workspace.updated': ['settings change', 'settings changes'],
  'member.added': ['member joined', 'members joined'],
  'member.role_changed': ['role changed', 'roles changed'],
  'member.removed': ['member removed', 'members removed'],
  'member.left': ['member left', 'members left'],
  'invitation.created': ['invitation sent', 'invitations sent'],
  'invitation.accepted': ['invitation accepted', 'invitations accepted'],
  'invitation.revoked': ['invitation revoked', 'invitations revoked'],
  'invitation.declined': ['invitation declined', 'invitations declined'],
  'invitation.resent': ['invitation sent again', 'invitations sent again'],
  'project.created': ['project created', 'projects created'],
  'project.updated': ['project updated', 'projects updated'],
  'project.deleted': ['project deleted', 'projects deleted'],
};

export function actionLabel(action: string): string {
  return COUNT_NOUNS[action]?.[0] ?? action.replace(/[._]/g, ' ');
}

/** "1 update", "2 updates"; `several` for nouns whose plural is not the noun plus s. */
export const plural = count;

/** "2 projects created" where the kind is known, "3 changes: billing plan changed" otherwise. */
export function countPhrase(action: string, n: number): string {
  const nouns = COUNT_NOUNS[action];
  if (nouns) return plural(n, nouns[0], nouns[1]);
  return `${plural(n, 'change')}: ${actionLabel(action)}`;
}

function countsLine(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([action, n]) => countPhrase(action, n))
    .join(', ');
}

const article = (role: string) => (/^[aeiou]/i.test(role) ? `an ${role}` : `a ${role}`);

/** One event as a sentence: "Grace changed Alan’s role from member to admin". */
export function describeItem(item: DigestItem, recipientId?: string): string {
  const actor = item.actor ?? 'A former member';
  const isReader = Boolean(recipientId && item.aboutId === recipientId);
  const about = isReader ? 'you' : (item.about ?? item.subject ?? 'a former member');
  const possessive = isReader ? 'your' : `${about}’s`;
  const role = item.role ?? 'member';
  const subject = item.subject ?? '';
  switch (item.action) {
    case 'workspace.created':
      return `${actor} created the workspace ${subject}`.trim();
    case 'workspace.updated':
      return `${actor} changed the workspace settings`;
    case 'member.added':
      return item.aboutId && item.aboutId === item.actorId
        ? `${actor} joined as ${article(role)}`
        : `${actor} added ${about} as ${article(role)}`;
    case 'member.role_changed':
      return `${actor} changed ${possessive} role from ${item.oldRole ?? 'member'} to ${role}`;
    case 'member.removed':
      return `${actor} removed ${about} from the workspace`;
    case 'member.left':
      return `${actor} left the workspace`;
    case 'invitation.created':
      return `${actor} invited ${about} as ${article(role)}`;
    case 'invitation.accepted':
      // The one line of an acceptance: the joining it brought is not told again.
      return item.role
        ? `${actor} accepted the invitation and joined as ${article(role)}`
        : `${actor} accepted the invitation`;
    case 'invitation.revoked':
      return `${actor} revoked the invitation for ${about}`;
    case 'invitation.declined':
      return `${actor} declined the invitation`;
    case 'invitation.resent':
      return `${actor} sent the invitation for ${about} again`;
    case 'project.created':
      return `${actor} created the project ${subject}`.trim();
    case 'project.updated':
      return `${actor} updated the project ${subject}`.trim();
    case 'project.deleted':
      return `${actor} deleted the project ${subject}`.trim();
    default:
      return subject
        ? `${actor}: ${actionLabel(item.action)}, ${subject}`
        : `${actor}: ${actionLabel(item.action)}`;
  }
}

export interface DigestSection {
  name: string;
  url: string;
  summary: string;
  items: string[];
}

export function composeDigest(input: DigestInput): ComposedMail {
  const total = input.workspaces.reduce((sum, w) => sum + w.total, 0);
  const period = input.frequency === 'daily' ? 'today' : 'this week';
  const productName = input.productName ?? 'Tenantry';
  const subject = `Your ${input.frequency} digest: ${plural(total, 'update')} in ${plural(input.workspaces.length, 'workspace')}`;
  const greeting = input.recipientName ? `Hi ${input.recipientName},` : 'Hi,';
  const intro = `Here is what happened ${period} in your workspaces.`;
  const why = `You receive this because your digest is set to ${input.frequency}.`;
  const preferencesUrl = `${input.appUrl}/settings/notifications`;
  const sections: DigestSection[] = input.workspaces.map((w) => ({
    name: w.name,
    url: `${input.appUrl}/w/${encodeURIComponent(w.slug)}`,
    summary: `${plural(w.total, 'update')}: ${countsLine(w.counts)}`,
    items: w.latest.map((item) => describeItem(item, input.recipientId)),
  }));

  const text = [
    greeting,
    '',
    intro,
    '',
    ...sections.flatMap((s) => [
      `${s.name} (${s.summary})`,
      ...s.items.map((item) => `  - ${item}`),
      `  Open: ${s.url}`,
      '',
    ]),
    why,
    `Unsubscribe: ${input.unsubscribeUrl}`,
    `Preferences: ${preferencesUrl}`,
    '',
    `${productName} · ${input.appUrl}`,
  ].join('\n');

  const html = renderDigestHtml({
    productName,
    appUrl: input.appUrl,
    heading: `Your ${input.frequency} digest`,
    preview: `${plural(total, 'update')} in ${plural(input.workspaces.length, 'workspace')}`,
    greeting,
    intro,
    sections,
    why,
    unsubscribeUrl: input.unsubscribeUrl,
    preferencesUrl,
  });

  return {
    subject,
    text,
    html,
    headers: {
      'List-Unsubscribe': `<${input.unsubscribeUrl}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  };
}
