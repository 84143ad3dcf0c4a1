// In charge of the digest e-mail itself: per workspace, what happened (counts per kind of change
// and the latest items), links into the app, plain-text and HTML parts, and the one-click
// unsubscribe link and headers (RFC 8058). Pure: data in, message out.
export interface DigestItem {
  action: string;
  subject: string | null;
  actor: string | null;
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
  recipientName: string | null;
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

const ACTION_LABELS: Record<string, string> = {
  'workspace.created': 'workspace created',
  'workspace.updated': 'workspace settings changed',
  'member.added': 'member joined',
  'member.role_changed': 'role changed',
  'member.removed': 'member removed',
  'member.left': 'member left',
  'invitation.created': 'invitation sent',
  'invitation.accepted': 'invitation accepted',
  'invitation.revoked': 'invitation revoked',
  'invitation.declined': 'invitation declined',
  'project.created': 'project created',
  'project.updated': 'project updated',
  'project.deleted': 'project deleted',
};

export function actionLabel(action: string): string {
  return ACTION_LABELS[action] ?? action.replace(/[._]/g, ' ');
}

function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function countsLine(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([action, n]) => `${n} × ${actionLabel(action)}`)
    .join(', ');
}

function itemLine(item: DigestItem): string {
  const who = item.actor ?? 'Someone';
  const what = item.subject ? `${actionLabel(item.action)}: ${item.subject}` : actionLabel(item.action);
  return `${who} — ${what}`;
}

export function composeDigest(input: DigestInput): ComposedMail {
  const total = input.workspaces.reduce((sum, w) => sum + w.total, 0);
  const period = input.frequency === 'daily' ? 'today' : 'this week';
  const subject = `Your ${input.frequency} digest: ${plural(total, 'update')} in ${plural(input.workspaces.length, 'workspace')}`;
  const greeting = input.recipientName ? `Hi ${input.recipientName},` : 'Hi,';
  const workspaceUrl = (w: WorkspaceDigest) => `${input.appUrl}/w/${encodeURIComponent(w.slug)}`;

  const text = [
    greeting,
    '',
    `Here is what happened ${period} in your workspaces.`,
    '',
    ...input.workspaces.flatMap((w) => [
      `${w.name} (${plural(w.total, 'update')}): ${countsLine(w.counts)}`,
      ...w.latest.map((item) => `  - ${itemLine(item)}`),
      `  Open: ${workspaceUrl(w)}`,
      '',
    ]),
    `You receive this because your digest is set to ${input.frequency}.`,
    `Unsubscribe: ${input.unsubscribeUrl}`,
    `Preferences: ${input.appUrl}/settings/notifications`,
  ].join('\n');

  const html = [
    '<!doctype html><html><body style="font-family:system-ui,sans-serif;color:#1f2933;max-width:640px">',
    `<p>${escapeHtml(greeting)}</p>`,
    `<p>Here is what happened ${period} in your workspaces.</p>`,
    ...input.workspaces.map(
      (w) =>
        `<h2 style="font-size:18px;margin-bottom:4px"><a href="${escapeHtml(workspaceUrl(w))}">${escapeHtml(w.name)}</a></h2>` +
        `<p style="margin-top:0;color:#52606d">${escapeHtml(plural(w.total, 'update'))}: ${escapeHtml(countsLine(w.counts))}</p>` +
        `<ul>${w.latest.map((item) => `<li>${escapeHtml(itemLine(item))}</li>`).join('')}</ul>`,
    ),
    `<p style="color:#7b8794;font-size:13px">You receive this because your digest is set to ${input.frequency}. ` +
      `<a href="${escapeHtml(input.unsubscribeUrl)}">Unsubscribe</a> · ` +
      `<a href="${escapeHtml(input.appUrl)}/settings/notifications">Preferences</a></p>`,
    '</body></html>',
  ].join('\n');

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
