// In charge of a digest run: find eligible users in batches (set-based: one query per batch, no
// query per user), compose each digest, and enqueue the e-mails together with their ledger rows
// in one statement, so every user gets at most one digest per period however runs overlap.
//
// Eligible: preference equals the frequency, e-mail confirmed, not banned, no digest yet for this
// period, and activity by someone else in a workspace they belong to and have not muted, since
// their last digest of this frequency (looking back at most one period).
import type { Pool } from '../db/pool.js';
import { composeDigest, type WorkspaceDigest } from './compose.js';
import { periodLengthMs, periodStart, type Frequency } from './frequency.js';
import { unsubscribeToken, type UnsubscribeKey } from './unsubscribe-token.js';

export interface DigestDeps {
  pool: Pool;
  appUrl: string;
  unsubscribeKey: UnsubscribeKey;
  /** the product's name in the e-mail (PRODUCT_NAME) */
  productName?: string;
}

export interface DigestRunOptions {
  now?: Date;
  batchSize?: number;
  /** latest items listed per workspace */
  latestPerWorkspace?: number;
  onProgress?: (progress: { scanned: number; sent: number }) => void;
}

export interface DigestRunResult {
  frequency: Frequency;
  periodStart: string;
  /** digests enqueued by this run */
  sent: number;
  /** candidate users examined */
  scanned: number;
}

interface CandidateRow {
  id: string;
  email: string;
  display_name: string | null;
  workspaces: WorkspaceDigest[] | null;
}

const CANDIDATES_SQL = `
with candidates as (
  select u.id, u.email, nullif(btrim(p.display_name), '') as display_name, np.muted_workspace_ids as muted,
         greatest(coalesce(last.created_at, '-infinity'::timestamptz), $3::timestamptz - make_interval(secs => $4)) as since
  from public.notification_preferences np
  join auth.users u on u.id = np.user_id
  left join public.profiles p on p.id = u.id
  left join lateral (
    select l.created_at from internal.digest_ledger l
    where l.user_id = u.id and l.frequency = $1 order by l.created_at desc limit 1
  ) last on true
  where np.digest_frequency = $1
    and np.user_id > $5
    and u.email is not null and u.email_confirmed_at is not null and u.deleted_at is null
    and (u.banned_until is null or u.banned_until <= $3)
    and not exists (select 1 from internal.digest_ledger l
                    where l.user_id = u.id and l.frequency = $1 and l.period_start = $2)
  order by np.user_id
  limit $6
), events as (
  select c.id as user_id, e.id, e.workspace_id, e.action, e.subject, e.data, e.actor_id, e.created_at
  from candidates c
  join public.workspace_members m on m.user_id = c.id and not (m.workspace_id = any (c.muted))
  -- A workspace that requires two-step verification shows its activity only to members who have
  -- a second factor: an e-mail must not tell what the app would hide from them (migration 0031).
  join public.workspaces wm on wm.id = m.workspace_id
   and (not wm.require_mfa
        or exists (select 1 from auth.mfa_factors f where f.user_id = c.id and f.status = 'verified'))
  join public.activity_events e on e.workspace_id = m.workspace_id
   and e.created_at > c.since and e.created_at <= $3
   and e.actor_id is distinct from c.id
), per_action as (
  select user_id, workspace_id, action, count(*)::int as n from events group by 1, 2, 3
), per_workspace as (
  select a.user_id, a.workspace_id, w.name, w.slug, sum(a.n)::int as total, json_object_agg(a.action, a.n) as counts
  from per_action a join public.workspaces w on w.id = a.workspace_id
  group by 1, 2, 3, 4
), latest as (
  select l.user_id, l.workspace_id,
         json_agg(json_build_object('action', l.action, 'subject', l.subject,
                  'actor', coalesce(nullif(btrim(pr.display_name), ''), pr.email), 'actorId', l.actor_id,
                  'about', coalesce(nullif(btrim(ab.display_name), ''), ab.email), 'aboutId', ab.id,
                  'role', l.data ->> 'role', 'oldRole', l.data ->> 'old_role', 'at', l.created_at)
                  order by l.created_at desc, l.id desc) as items
  from (select ev.*, row_number() over (partition by ev.user_id, ev.workspace_id order by ev.created_at desc, ev.id desc) as rn
        from events ev) l
  left join public.profiles pr on pr.id = l.actor_id
  -- Whoever an event is about is named as its actors are (display name, else e-mail): members by
  -- their id, invitees by their address when they have an account.
  left join lateral (
    select x.id, x.display_name, x.email from public.profiles x
    where x.id = case
      when l.action like 'member.%' and l.data ->> 'user_id' ~ '^[0-9a-fA-F-]{36}$' then (l.data ->> 'user_id')::uuid
      when l.action like 'invitation.%' then (select iu.id from auth.users iu where iu.email = l.subject)
    end
  ) ab on true
  where l.rn <= $7
  group by 1, 2
), digest as (
  select w.user_id,
         json_agg(json_build_object('workspaceId', w.workspace_id, 'name', w.name, 'slug', w.slug, 'total', w.total,
                  'counts', w.counts, 'latest', coalesce(l.items, '[]'::json)) order by w.total desc, w.name) as workspaces
  from per_workspace w left join latest l using (user_id, workspace_id)
  group by w.user_id
)
select c.id, c.email, c.display_name, d.workspaces
from candidates c left join digest d on d.user_id = c.id
order by c.id`;

const ENQUEUE_SQL = `
with input as (
  select * from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::int[])
    as t(user_id, to_address, subject, text_body, html_body, headers, events)
), ledger as (
  insert into internal.digest_ledger (user_id, frequency, period_start, events)
  select user_id, $8, $9, events from input
  on conflict do nothing
  returning user_id
), mail as (
  insert into internal.outbox (kind, dedupe_key, to_address, subject, text_body, html_body, headers, message_id)
  select 'digest', 'digest:' || i.user_id || ':' || $8 || ':' || $10, i.to_address, i.subject, i.text_body,
         i.html_body, i.headers, '<' || gen_random_uuid() || '@tenantry.digest>'
  from input i join ledger l using (user_id)
  on conflict (dedupe_key) do nothing
  returning id
)
select count(*)::int as sent from mail`;

export async function runDigest(
  deps: DigestDeps,
  frequency: Frequency,
  options: DigestRunOptions = {},
): Promise<DigestRunResult> {
  const now = options.now ?? new Date();
  const period = periodStart(frequency, now);
  const batchSize = options.batchSize ?? 500;
  let after = '00000000-0000-0000-0000-000000000000';
  let sent = 0;
  let scanned = 0;
  for (;;) {
    const batch = await deps.pool.query<CandidateRow>(CANDIDATES_SQL, [
      frequency,
      period,
      now,
      periodLengthMs(frequency) / 1000,
      after,
      batchSize,
      options.latestPerWorkspace ?? 5,
    ]);
    if (batch.rows.length === 0) break;
    scanned += batch.rows.length;
    after = batch.rows[batch.rows.length - 1]!.id;

    const columns: [string[], string[], string[], string[], string[], string[], number[]] = [
      [],
      [],
      [],
      [],
      [],
      [],
      [],
    ];
    for (const candidate of batch.rows) {
      if (!candidate.workspaces || candidate.workspaces.length === 0) continue;
      const token = unsubscribeToken(deps.unsubscribeKey, candidate.id);
      const mail = composeDigest({
        frequency,
        recipientId: candidate.id,
        recipientName: candidate.display_name,
        productName: deps.productName ?? 'Tenantry',
        workspaces: candidate.workspaces,
        appUrl: deps.appUrl,
        unsubscribeUrl: `${deps.appUrl}/api/notifications/unsubscribe?token=${encodeURIComponent(token)}`,
      });
      columns[0].push(candidate.id);
      columns[1].push(candidate.email);
      columns[2].push(mail.subject);
      columns[3].push(mail.text);
      columns[4].push(mail.html);
      columns[5].push(JSON.stringify(mail.headers));
      columns[6].push(candidate.workspaces.reduce((n, w) => n + w.total, 0));
    }
    if (columns[0].length > 0) {
      const result = await deps.pool.query<{ sent: number }>(ENQUEUE_SQL, [
        ...columns,
        frequency,
        period,
        period.toISOString(),
      ]);
      sent += result.rows[0]?.sent ?? 0;
    }
    options.onProgress?.({ scanned, sent });
    if (batch.rows.length < batchSize) break;
  }
  return { frequency, periodStart: period.toISOString(), sent, scanned };
}
