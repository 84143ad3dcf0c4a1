// In charge of reading the security audit log for the web pages: a workspace's lines for its owners
// and admins (filtered by action, actor, dates and a search, a page at a time, or all of them for
// an export, which is itself recorded in the same transaction), and a user's own recent security
// events. Row-level security decides who reads what (migration 0095); nothing here widens it.
import { asUser } from '@/app/lib/db';
import { containsPattern, paged, pageWindow, type PageRequest, type Paged } from '@/app/lib/paging';
import type { SignedIn } from '@/app/lib/session';

export const AUDIT_PAGE_SIZE = 50;
/** An export holds at most this many lines, newest first (narrow the dates for older ones). */
export const AUDIT_EXPORT_MAX_ROWS = 10_000;

export interface AuditLine {
  id: string;
  createdAt: Date;
  action: string;
  actorId: string | null;
  actorType: string;
  /** the actor's e-mail address when they are (or were) a member the reader may see */
  actorEmail: string | null;
  userId: string | null;
  targetType: string | null;
  targetId: string | null;
  ipAddress: string | null;
  userAgent: string | null;
  details: Record<string, unknown>;
}

export interface AuditFilters {
  /** exact action name, '' for all */
  action: string;
  /** part of the actor's e-mail address, or their user id */
  actor: string;
  /** yyyy-mm-dd, inclusive; '' for no bound */
  from: string;
  to: string;
}

type Params = Record<string, string | string[] | undefined>;
const first = (v: string | string[] | undefined): string => (Array.isArray(v) ? (v[0] ?? '') : (v ?? ''));
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The filters a page's query string asks for, bounded and checked (what is not valid is dropped). */
export function auditFilters(params: Params): AuditFilters {
  const action = first(params.action).trim();
  const day = (v: string) => (DAY.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) ? v : '');
  return {
    action: /^[a-z][a-z0-9_.]{0,63}$/.test(action) ? action : '',
    actor: first(params.actor).trim().slice(0, 100),
    from: day(first(params.from).trim()),
    to: day(first(params.to).trim()),
  };
}

/** An audit_events row as the views select it (SELECT's columns and their own extras). */
export interface AuditRow {
  id: string;
  created_at: Date;
  action: string;
  actor_id: string | null;
  actor_type: string;
  actor_email: string | null;
  user_id: string | null;
  target_type: string | null;
  target_id: string | null;
  ip_address: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
}

export const toAuditLine = (r: AuditRow): AuditLine => ({
  id: String(r.id),
  createdAt: new Date(r.created_at),
  action: r.action,
  actorId: r.actor_id,
  actorType: r.actor_type,
  actorEmail: r.actor_email,
  userId: r.user_id,
  targetType: r.target_type,
  targetId: r.target_id,
  ipAddress: r.ip_address,
  userAgent: r.user_agent,
  details: r.details ?? {},
});

/**
 * The conditions every view of the log filters by (action, actor, dates, search), each value a
 * parameter numbered after the `taken` ones the caller's own conditions use; `email` is the column
 * holding the actor's address in the caller's query.
 */
export function auditConditions(
  filters: AuditFilters,
  q: string,
  email: string,
  taken: number,
): { parts: string[]; values: unknown[] } {
  const parts: string[] = [];
  const values: unknown[] = [];
  const add = (sql: (n: string) => string, value: unknown) => {
    values.push(value);
    parts.push(sql(`$${taken + values.length}`));
  };
  if (filters.action) add((n) => `e.action = ${n}`, filters.action);
  if (filters.actor) {
    // Only a well-formed id is compared as one: anything else is part of an address.
    if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(filters.actor))
      add((n) => `e.actor_id = ${n}::uuid`, filters.actor);
    else add((n) => `${email} ilike ${n}`, containsPattern(filters.actor));
  }
  if (filters.from) add((n) => `e.created_at >= ${n}::date`, filters.from);
  if (filters.to) add((n) => `e.created_at < ${n}::date + 1`, filters.to);
  if (q) {
    add(
      (n) =>
        `(e.action ilike ${n} or e.target_id ilike ${n} or e.details::text ilike ${n}
          or host(e.ip_address) ilike ${n} or e.user_agent ilike ${n} or ${email} ilike ${n})`,
      containsPattern(q),
    );
  }
  return { parts, values };
}

/** The WHERE clause and its parameters (every value a parameter), after the workspace's $1. */
function whereFor(filters: AuditFilters, q: string): { sql: string; values: unknown[] } {
  const { parts, values } = auditConditions(filters, q, 'p.email', 1);
  return { sql: ['e.workspace_id = $1', ...parts].join(' and '), values };
}

const SELECT = `select e.id, e.created_at, e.action, e.actor_id, e.actor_type, p.email as actor_email,
    e.user_id, e.target_type, e.target_id, host(e.ip_address) as ip_address, e.user_agent, e.details
  from public.audit_events e left join public.profiles p on p.id = e.actor_id`;

/** A page of the workspace's log, newest first. */
export async function auditPage(
  user: SignedIn,
  workspaceId: string,
  filters: AuditFilters,
  request: PageRequest,
): Promise<Paged<AuditLine>> {
  const { limit, offset } = pageWindow(request, AUDIT_PAGE_SIZE);
  const where = whereFor(filters, request.q);
  const n = where.values.length;
  const rows = await asUser(user, async (tx) => {
    const r = await tx.query<AuditRow>(
      `${SELECT} where ${where.sql} order by e.created_at desc, e.id desc limit $${n + 2} offset $${n + 3}`,
      [workspaceId, ...where.values, limit, offset],
    );
    return r.rows;
  });
  return paged(rows.map(toAuditLine), request, AUDIT_PAGE_SIZE);
}

/**
 * Every line the filters select (up to AUDIT_EXPORT_MAX_ROWS), with the export recorded in the
 * same transaction: no file leaves without its line. Refused (PT404) unless owner or admin.
 */
export async function exportAudit(
  user: SignedIn,
  workspaceId: string,
  filters: AuditFilters,
  q: string,
  format: 'csv' | 'json',
): Promise<AuditLine[]> {
  const where = whereFor(filters, q);
  const n = where.values.length;
  return asUser(user, async (tx) => {
    const r = await tx.query<AuditRow>(
      `${SELECT} where ${where.sql} order by e.created_at desc, e.id desc limit $${n + 2}`,
      [workspaceId, ...where.values, AUDIT_EXPORT_MAX_ROWS],
    );
    await tx.query('select public.record_audit_export($1, $2, $3)', [workspaceId, format, r.rows.length]);
    return r.rows.map(toAuditLine);
  });
}

/** The user's own most recent security events (sign-ins, factors, passwords, sessions). */
export async function recentSecurityEvents(user: SignedIn, limit = 10): Promise<AuditLine[]> {
  return asUser(user, async (tx) => {
    const r = await tx.query<AuditRow>(
      `select e.id, e.created_at, e.action, e.actor_id, e.actor_type, null as actor_email, e.user_id,
         e.target_type, e.target_id, host(e.ip_address) as ip_address, e.user_agent, e.details
       from public.audit_events e
       where e.workspace_id is null and e.user_id = $1
       order by e.created_at desc, e.id desc limit $2`,
      [user.userId, Math.min(Math.max(limit, 1), 50)],
    );
    return r.rows.map(toAuditLine);
  });
}

const CSV_COLUMNS = [
  'created_at',
  'action',
  'actor_id',
  'actor_type',
  'actor_email',
  'user_id',
  'target_type',
  'target_id',
  'ip_address',
  'user_agent',
  'details',
] as const;

/** One CSV field: quoted when needed; a leading =, +, - or @ is defused for spreadsheets. */
function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The lines as CSV (RFC 4180, header first) or as a JSON array. */
export function formatAudit(lines: AuditLine[], format: 'csv' | 'json'): string {
  const records = lines.map((l) => ({
    created_at: l.createdAt.toISOString(),
    action: l.action,
    actor_id: l.actorId,
    actor_type: l.actorType,
    actor_email: l.actorEmail,
    user_id: l.userId,
    target_type: l.targetType,
    target_id: l.targetId,
    ip_address: l.ipAddress,
    user_agent: l.userAgent,
    details: l.details,
  }));
  if (format === 'json') return JSON.stringify(records, null, 2);
  const rows = records.map((r) =>
    CSV_COLUMNS.map((c) => {
      const v = r[c];
      return csvField(v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v));
    }).join(','),
  );
  return [CSV_COLUMNS.join(','), ...rows].join('\r\n') + '\r\n';
}

/** A line told briefly for people ("Role changed: member → admin"). */
export function describeAudit(line: Pick<AuditLine, 'action' | 'details'>): string {
  const d = line.details;
  const s = (v: unknown) => (typeof v === 'string' ? v : '');
  switch (line.action) {
    case 'login':
      if (d.method === 'oauth_authorization_code') return 'A connected app started a session';
      return `Signed in${s(d.method) ? ` (${s(d.method)})` : ''}`;
    case 'login_failed':
      return 'Sign-in failed: wrong password';
    case 'logout':
      return 'Signed out';
    case 'token_revoked':
      return 'Another session signed out';
    case 'user_updated_password':
      return 'Password changed';
    case 'user_modified':
      return 'E-mail address change';
    case 'user_deleted':
      return 'Account deleted';
    case 'user_recovery_requested':
      return 'Password reset requested';
    case 'factor_in_progress':
      return 'Two-step verification set-up started';
    case 'verification_attempted':
      return d.result === 'invalid_code'
        ? 'Wrong two-step verification code'
        : 'Two-step verification confirmed';
    case 'factor_deleted':
      return 'Two-step verification removed by an administrator';
    case 'factor_unenrolled':
      return 'Two-step verification removed';
    case 'passkey_created':
      return 'Passkey added';
    case 'passkey_deleted':
      return 'Passkey removed';
    case 'oauth_authorization_approved':
      return d.automatic ? 'A connected app was let in again' : 'An app was allowed to use the account';
    case 'oauth_authorization_denied':
      return 'An app was denied access';
    case 'oauth_token_issued':
      return 'A connected app received its access';
    case 'oauth_code_reused':
      return "An app's one-time code was used twice; its session was ended";
    case 'oauth_grant_revoked':
      return 'An app was disconnected';
    case 'member.added':
      return `Member added as ${s(d.role)}`;
    case 'member.role_changed':
      return `Role changed: ${s(d.from)} → ${s(d.to)}`;
    case 'member.removed':
      return 'Member removed';
    case 'member.left':
      return 'Member left';
    case 'invitation.created':
      return `Invitation sent to ${s(d.email)} as ${s(d.role)}`;
    case 'invitation.revoked':
      return `Invitation to ${s(d.email)} revoked`;
    case 'invitation.accepted':
      return `Invitation to ${s(d.email)} accepted`;
    case 'invitation.declined':
      return `Invitation to ${s(d.email)} declined`;
    case 'workspace.settings_changed':
      return `Settings changed: ${Object.keys((d.changes as Record<string, unknown>) ?? {}).join(', ')}`;
    case 'workspace.deleted':
      return 'Workspace deleted';
    case 'billing.plan_changed':
      return `Plan changed: ${s(d.from)} → ${s(d.to)}`;
    case 'billing.status_changed':
      return `Billing status: ${s(d.from)} → ${s(d.to)}`;
    case 'billing.cancellation_changed':
      return d.cancel_at_period_end ? 'Cancellation scheduled' : 'Cancellation withdrawn';
    case 'audit.exported':
      return `Audit log exported (${s(d.format).toUpperCase()}, ${String(d.rows ?? 0)} lines)`;
    default:
      return line.action;
  }
}

/** The actions offered in the page's filter. */
export const AUDIT_ACTIONS = [
  'member.added',
  'member.role_changed',
  'member.removed',
  'member.left',
  'invitation.created',
  'invitation.revoked',
  'invitation.accepted',
  'invitation.declined',
  'workspace.settings_changed',
  'billing.plan_changed',
  'billing.status_changed',
  'billing.cancellation_changed',
  'audit.exported',
] as const;
