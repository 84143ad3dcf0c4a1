// In charge of what the operator console's pages read (decision 0096): accounts, workspaces,
// subscriptions and payment events, the mail outbox, across every tenant. Read with the service's
// own connection, so only ever called after requireOperator (src/app/lib/operator.ts) let the
// request in; every value a parameter, every list a page at a time.
import { containsPattern, paged, pageWindow, type PageRequest, type Paged } from '@/app/lib/paging';
import { getRuntime } from '@/server/runtime';

export const OPERATOR_PAGE_SIZE = 25;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const db = () => getRuntime().pool;

/** Which accounts the users list shows: people (the default), workspace API keys, or both. */
export type AccountKind = 'people' | 'keys' | 'all';

export interface AccountRow {
  id: string;
  email: string | null;
  phone: string | null;
  createdAt: Date;
  lastSignInAt: Date | null;
  bannedUntil: Date | null;
  isAnonymous: boolean;
  /** a workspace API key's principal (migration 0097), not a person */
  isApiKey: boolean;
  isStaff: boolean;
}

interface AccountDbRow {
  id: string;
  email: string | null;
  phone: string | null;
  created_at: Date;
  last_sign_in_at: Date | null;
  banned_until: Date | null;
  is_anonymous: boolean;
  is_api_key: boolean;
  is_staff: boolean;
}

const toAccount = (r: AccountDbRow): AccountRow => ({
  id: r.id,
  email: r.email,
  phone: r.phone,
  createdAt: new Date(r.created_at),
  lastSignInAt: r.last_sign_in_at ? new Date(r.last_sign_in_at) : null,
  bannedUntil: r.banned_until ? new Date(r.banned_until) : null,
  isAnonymous: r.is_anonymous,
  isApiKey: r.is_api_key,
  isStaff: r.is_staff,
});

const ACCOUNT_COLUMNS = `u.id, u.email, u.phone, u.created_at, u.last_sign_in_at,
  case when u.banned_until > now() then u.banned_until end as banned_until, u.is_anonymous,
  exists (select 1 from internal.api_keys k where k.id = u.id) as is_api_key,
  exists (select 1 from internal.operator_staff s where s.user_id = u.id) as is_staff`;

/** Accounts, newest first, searched by e-mail, phone or exact id. */
export async function searchAccounts(request: PageRequest, kind: AccountKind): Promise<Paged<AccountRow>> {
  const { limit, offset } = pageWindow(request, OPERATOR_PAGE_SIZE);
  const where = ['u.deleted_at is null'];
  const values: unknown[] = [];
  if (kind === 'people') where.push('not exists (select 1 from internal.api_keys k where k.id = u.id)');
  if (kind === 'keys') where.push('exists (select 1 from internal.api_keys k where k.id = u.id)');
  if (request.q) {
    if (UUID.test(request.q)) {
      values.push(request.q);
      where.push(`u.id = $${values.length}::uuid`);
    } else {
      values.push(containsPattern(request.q.toLowerCase()));
      const n = `$${values.length}`;
      where.push(`(u.email like ${n} or u.phone like ${n})`);
    }
  }
  values.push(limit, offset);
  const result = await db().query<AccountDbRow>(
    `select ${ACCOUNT_COLUMNS} from auth.users u where ${where.join(' and ')}
     order by u.created_at desc, u.id desc limit $${values.length - 1} offset $${values.length}`,
    values,
  );
  return paged(result.rows.map(toAccount), request, OPERATOR_PAGE_SIZE);
}

export interface AccountDetail extends AccountRow {
  identities: { provider: string; email: string | null; lastSignInAt: Date | null }[];
  factors: { id: string; type: string; name: string | null; status: string; createdAt: Date }[];
  sessions: {
    id: string;
    aal: string;
    ip: string | null;
    userAgent: string | null;
    createdAt: Date;
    refreshedAt: Date | null;
  }[];
  workspaces: { id: string; name: string; slug: string; role: string }[];
}

/** One account with its identities, factors, sessions and workspaces; null when there is none. */
export async function accountDetail(id: string): Promise<AccountDetail | null> {
  if (!UUID.test(id)) return null;
  const found = await db().query<AccountDbRow>(
    `select ${ACCOUNT_COLUMNS} from auth.users u where u.id = $1 and u.deleted_at is null`,
    [id],
  );
  const row = found.rows[0];
  if (!row) return null;
  const [identities, factors, sessions, workspaces] = await Promise.all([
    db().query<{ provider: string; email: string | null; last_sign_in_at: Date | null }>(
      `select provider, identity_data->>'email' as email, last_sign_in_at from auth.identities
       where user_id = $1 order by created_at`,
      [id],
    ),
    db().query<{
      id: string;
      factor_type: string;
      friendly_name: string | null;
      status: string;
      created_at: Date;
    }>(
      `select id, factor_type, friendly_name, status, created_at from auth.mfa_factors
       where user_id = $1 order by created_at`,
      [id],
    ),
    db().query<{
      id: string;
      aal: string;
      ip: string | null;
      user_agent: string | null;
      created_at: Date;
      refreshed_at: Date | null;
    }>(
      `select id, aal, host(ip) as ip, user_agent, created_at, refreshed_at from auth.sessions
       where user_id = $1 order by created_at desc limit 100`,
      [id],
    ),
    db().query<{ id: string; name: string; slug: string; role: string }>(
      `select w.id, w.name, w.slug, m.role from public.workspace_members m
       join public.workspaces w on w.id = m.workspace_id where m.user_id = $1 order by w.name limit 100`,
      [id],
    ),
  ]);
  return {
    ...toAccount(row),
    identities: identities.rows.map((r) => ({
      provider: r.provider,
      email: r.email,
      lastSignInAt: r.last_sign_in_at ? new Date(r.last_sign_in_at) : null,
    })),
    factors: factors.rows.map((r) => ({
      id: r.id,
      type: r.factor_type,
      name: r.friendly_name,
      status: r.status,
      createdAt: new Date(r.created_at),
    })),
    sessions: sessions.rows.map((r) => ({
      id: r.id,
      aal: r.aal,
      ip: r.ip,
      userAgent: r.user_agent,
      createdAt: new Date(r.created_at),
      refreshedAt: r.refreshed_at ? new Date(r.refreshed_at) : null,
    })),
    workspaces: workspaces.rows,
  };
}

export interface WorkspaceRow {
  id: string;
  name: string;
  slug: string;
  createdAt: Date;
  plan: string;
  status: string;
  members: number;
  projects: number;
  storageBytes: number;
}

interface WorkspaceDbRow {
  id: string;
  name: string;
  slug: string;
  created_at: Date;
  plan: string | null;
  status: string | null;
  members: number;
  projects: number;
  storage_bytes: string | null;
}

const WORKSPACE_SELECT = `select w.id, w.name, w.slug, w.created_at, s.plan, s.status,
    (select count(*)::int from public.workspace_members m where m.workspace_id = w.id) as members,
    (select count(*)::int from public.projects p where p.workspace_id = w.id) as projects,
    (select bytes from internal.workspace_storage_usage su where su.workspace_id = w.id) as storage_bytes
  from public.workspaces w left join public.subscriptions s on s.workspace_id = w.id`;

const toWorkspace = (r: WorkspaceDbRow): WorkspaceRow => ({
  id: r.id,
  name: r.name,
  slug: r.slug,
  createdAt: new Date(r.created_at),
  plan: r.plan ?? 'free',
  status: r.status ?? 'active',
  members: r.members,
  projects: r.projects,
  storageBytes: Number(r.storage_bytes ?? 0),
});

/** Workspaces, newest first, searched by name, address or exact id. */
export async function searchWorkspaces(request: PageRequest): Promise<Paged<WorkspaceRow>> {
  const { limit, offset } = pageWindow(request, OPERATOR_PAGE_SIZE);
  const values: unknown[] = [];
  let where = 'true';
  if (request.q) {
    if (UUID.test(request.q)) {
      values.push(request.q);
      where = 'w.id = $1::uuid';
    } else {
      values.push(containsPattern(request.q));
      where = '(w.name ilike $1 or w.slug ilike $1)';
    }
  }
  values.push(limit, offset);
  const result = await db().query<WorkspaceDbRow>(
    `${WORKSPACE_SELECT} where ${where} order by w.created_at desc, w.id desc
     limit $${values.length - 1} offset $${values.length}`,
    values,
  );
  return paged(result.rows.map(toWorkspace), request, OPERATOR_PAGE_SIZE);
}

export interface WorkspaceDetail extends WorkspaceRow {
  memberList: { userId: string; email: string | null; role: string; joinedAt: Date }[];
  subscription: {
    currentPeriodEnd: Date | null;
    cancelAtPeriodEnd: boolean;
    pastDueSince: Date | null;
    stripeCustomerId: string | null;
  } | null;
}

export async function workspaceDetail(id: string): Promise<WorkspaceDetail | null> {
  if (!UUID.test(id)) return null;
  const found = await db().query<WorkspaceDbRow>(`${WORKSPACE_SELECT} where w.id = $1`, [id]);
  const row = found.rows[0];
  if (!row) return null;
  const [members, subscription] = await Promise.all([
    db().query<{ user_id: string; email: string | null; role: string; created_at: Date }>(
      `select m.user_id, u.email, m.role, m.created_at from public.workspace_members m
       left join auth.users u on u.id = m.user_id where m.workspace_id = $1
       order by case m.role when 'owner' then 0 when 'admin' then 1 else 2 end, u.email limit 200`,
      [id],
    ),
    db().query<{
      current_period_end: Date | null;
      cancel_at_period_end: boolean;
      past_due_since: Date | null;
      stripe_customer_id: string | null;
    }>(
      `select current_period_end, cancel_at_period_end, past_due_since, stripe_customer_id
       from public.subscriptions where workspace_id = $1`,
      [id],
    ),
  ]);
  const s = subscription.rows[0];
  return {
    ...toWorkspace(row),
    memberList: members.rows.map((m) => ({
      userId: m.user_id,
      email: m.email,
      role: m.role,
      joinedAt: new Date(m.created_at),
    })),
    subscription: s
      ? {
          currentPeriodEnd: s.current_period_end ? new Date(s.current_period_end) : null,
          cancelAtPeriodEnd: s.cancel_at_period_end,
          pastDueSince: s.past_due_since ? new Date(s.past_due_since) : null,
          stripeCustomerId: s.stripe_customer_id,
        }
      : null,
  };
}

export interface SubscriptionRow {
  workspaceId: string;
  name: string;
  slug: string;
  plan: string;
  status: string;
  cancelAtPeriodEnd: boolean;
  currentPeriodEnd: Date | null;
  updatedAt: Date;
}

/** Workspaces' subscriptions, the ones needing attention (not active) first. */
export async function subscriptions(request: PageRequest): Promise<Paged<SubscriptionRow>> {
  const { limit, offset } = pageWindow(request, OPERATOR_PAGE_SIZE);
  const result = await db().query<{
    workspace_id: string;
    name: string;
    slug: string;
    plan: string;
    status: string;
    cancel_at_period_end: boolean;
    current_period_end: Date | null;
    updated_at: Date;
  }>(
    `select s.workspace_id, w.name, w.slug, s.plan, s.status, s.cancel_at_period_end,
       s.current_period_end, s.updated_at
     from public.subscriptions s join public.workspaces w on w.id = s.workspace_id
     order by (s.status = 'active'), s.updated_at desc, s.workspace_id limit $1 offset $2`,
    [limit, offset],
  );
  return paged(
    result.rows.map((r) => ({
      workspaceId: r.workspace_id,
      name: r.name,
      slug: r.slug,
      plan: r.plan,
      status: r.status,
      cancelAtPeriodEnd: r.cancel_at_period_end,
      currentPeriodEnd: r.current_period_end ? new Date(r.current_period_end) : null,
      updatedAt: new Date(r.updated_at),
    })),
    request,
    OPERATOR_PAGE_SIZE,
  );
}

export interface PaymentEventRow {
  id: string;
  type: string;
  status: string;
  attempts: number;
  lastError: string | null;
  receivedAt: Date;
}

/** The newest payment webhook events with how they were handled. */
export async function recentPaymentEvents(limit = 50): Promise<PaymentEventRow[]> {
  const result = await db().query<{
    id: string;
    type: string;
    status: string;
    attempts: number;
    last_error: string | null;
    received_at: Date;
  }>(
    `select id, type, status, attempts, last_error, received_at from internal.billing_events
     order by received_at desc, id limit $1`,
    [limit],
  );
  return result.rows.map((r) => ({
    id: r.id,
    type: r.type,
    status: r.status,
    attempts: r.attempts,
    lastError: r.last_error,
    receivedAt: new Date(r.received_at),
  }));
}

export type MailState = 'queued' | 'sent' | 'failed' | 'all';

export interface MailRow {
  id: string;
  kind: string;
  to: string;
  subject: string;
  attempts: number;
  lastError: string | null;
  createdAt: Date;
  state: 'queued' | 'sent' | 'failed';
}

/** The outbox, newest first, by state. */
export async function outbox(request: PageRequest, state: MailState): Promise<Paged<MailRow>> {
  const { limit, offset } = pageWindow(request, OPERATOR_PAGE_SIZE);
  const where = {
    queued: 'sent_at is null and failed_at is null',
    sent: 'sent_at is not null',
    failed: 'failed_at is not null and sent_at is null',
    all: 'true',
  }[state];
  const result = await db().query<{
    id: string;
    kind: string;
    to_address: string;
    subject: string;
    attempts: number;
    last_error: string | null;
    created_at: Date;
    sent_at: Date | null;
    failed_at: Date | null;
  }>(
    `select id, kind, to_address, subject, attempts, last_error, created_at, sent_at, failed_at
     from internal.outbox where ${where} order by id desc limit $1 offset $2`,
    [limit, offset],
  );
  return paged(
    result.rows.map((r) => ({
      id: String(r.id),
      kind: r.kind,
      to: r.to_address,
      subject: r.subject,
      attempts: r.attempts,
      lastError: r.last_error,
      createdAt: new Date(r.created_at),
      state: r.sent_at ? 'sent' : r.failed_at ? 'failed' : 'queued',
    })),
    request,
    OPERATOR_PAGE_SIZE,
  );
}
