// The security audit log: each security-relevant change writes its line (actor, address, user
// agent) with the change, through supabase-js and the identity API as clients make them; nobody
// can change or remove a line, not even service_role or the service's own connection; owners and
// admins read their workspace's log and nobody else does; retention removes only old lines.
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import { decodeJwt } from 'jose';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, expect, test } from 'vitest';
import ws from 'ws';
import { purgeAuditEvents } from '../../src/server/audit/retention.js';
import type { AccessTokenClaims } from '../../src/server/identity/access-tokens.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { SoftwareAuthenticator } from '../support/webauthn-authenticator.js';
import { checkoutCompleted, deliverEvent, envelope, subscriptionObject } from '../support/stripe-events.js';

const PASSWORD = 'correct horse battery';
const AGENT = 'AuditBrowser/1.0 (tests)';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    BILLING_PLANS: JSON.stringify([{ id: 'pro', name: 'Pro', priceId: 'price_pro_monthly' }]),
  });
});
afterAll(async () => server?.close());

let counter = 0;
const address = (label: string) => `audit-${label}-${++counter}-${Date.now()}@example.com`;

/** A supabase-js client that names its user agent, as a browser would. */
function browser(): SupabaseClient {
  return createClient(server.url, server.config.projectApiKey, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    realtime: { transport: ws as unknown as typeof WebSocket },
    global: { headers: { 'user-agent': AGENT } },
  });
}

async function signedUp(label: string) {
  const client = browser();
  const email = address(label);
  const { data, error } = await client.auth.signUp({ email, password: PASSWORD });
  if (error || !data.session) throw new Error(`sign-up failed: ${error?.message}`);
  return { client, email, id: data.user!.id };
}

interface Line {
  action: string;
  actor_id: string | null;
  actor_type: string;
  user_id: string | null;
  workspace_id: string | null;
  ip_address: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
}

async function linesFor(column: 'user_id' | 'workspace_id', id: string): Promise<Line[]> {
  const r = await server.pool.query<Line>(
    `select action, actor_id, actor_type, user_id, workspace_id, host(ip_address) as ip_address, user_agent, details
     from public.audit_events where ${column} = $1 order by id`,
    [id],
  );
  return r.rows;
}

const line = (lines: Line[], action: string) => {
  const found = lines.filter((l) => l.action === action);
  expect(
    found.map((l) => l.action),
    `a ${action} line`,
  ).toContain(action);
  return found[found.length - 1]!;
};

test('account events: sign-in and its failure, factors, password, address, sessions, sign-out', async () => {
  const me = await signedUp('account');
  // a failed sign-in, then a good one from another browser
  const other = browser();
  expect(
    (await other.auth.signInWithPassword({ email: me.email, password: 'wrong one' })).error,
  ).not.toBeNull();
  expect((await other.auth.signInWithPassword({ email: me.email, password: PASSWORD })).error).toBeNull();
  const otherSession = (await other.auth.getSession()).data.session!;

  // the other browser's session ended (before the second factor and the password change end it)
  // (the account's Security page ends another session through the identity service)
  const otherSessionId = decodeJwt<AccessTokenClaims>(otherSession.access_token).session_id;
  const mine = decodeJwt<AccessTokenClaims>((await me.client.auth.getSession()).data.session!.access_token);
  expect(await server.identity.endOwnSession(mine, otherSessionId)).toBe(true);
  // a factor enrolled, verified and removed
  const enrolled = await me.client.auth.mfa.enroll({ factorType: 'totp' });
  const wrong = await me.client.auth.mfa.challengeAndVerify({ factorId: enrolled.data!.id, code: '000000' });
  expect(wrong.error).not.toBeNull();
  const code = new TOTP({ secret: Secret.fromBase32(enrolled.data!.totp.secret) }).generate();
  expect(
    (await me.client.auth.mfa.challengeAndVerify({ factorId: enrolled.data!.id, code })).error,
  ).toBeNull();
  expect((await me.client.auth.mfa.unenroll({ factorId: enrolled.data!.id })).error).toBeNull();

  // password and address changes, a recovery request
  expect((await me.client.auth.updateUser({ password: 'another horse battery' })).error).toBeNull();
  expect((await me.client.auth.updateUser({ email: address('new') })).error).toBeNull();
  expect((await browser().auth.resetPasswordForEmail(me.email)).error).toBeNull();

  // then this one signs out
  expect((await me.client.auth.signOut()).error).toBeNull();

  const lines = await linesFor('user_id', me.id);
  for (const action of [
    'login',
    'login_failed',
    'factor_in_progress',
    'verification_attempted',
    'factor_unenrolled',
    'user_updated_password',
    'user_modified',
    'user_recovery_requested',
    'logout',
  ]) {
    const l = line(lines, action);
    expect(l.user_agent, action).toBe(AGENT);
    expect(l.ip_address, action).toMatch(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/);
    expect(l.workspace_id, action).toBeNull();
    if (!['login_failed', 'user_recovery_requested'].includes(action)) {
      expect(l.actor_id, action).toBe(me.id);
      expect(l.actor_type, action).toBe('user');
    }
  }
  expect(line(lines, 'login_failed').actor_type).toBe('anonymous');
  const attempts = lines.filter((l) => l.action === 'verification_attempted').map((l) => l.details.result);
  expect(attempts).toEqual(['invalid_code', 'verified']);
  expect(line(lines, 'token_revoked')).toMatchObject({ actor_id: me.id, details: {} });
  expect(line(lines, 'login').details).toEqual({ method: 'password' });
  // nothing secret in the details: no password, code or token
  expect(JSON.stringify(lines)).not.toMatch(/horse|"code"|token_hash|secret/);

  // GoTrue's view of the same events, for tools that read auth.audit_log_entries
  const gotrue = await server.pool.query<{ payload: { action: string; actor_id: string; log_type: string } }>(
    `select payload from auth.audit_log_entries where payload->>'actor_id' = $1`,
    [me.id],
  );
  expect(gotrue.rows.map((r) => r.payload.action)).toEqual(expect.arrayContaining(['login', 'logout']));
  expect(gotrue.rows.find((r) => r.payload.action === 'login')!.payload.log_type).toBe('account');

  // the user reads their own security events through the data API
  const again = browser();
  await again.auth.signInWithPassword({ email: me.email, password: 'another horse battery' });
  const own = await again.from('audit_events').select('action').order('id');
  expect(own.error).toBeNull();
  expect(own.data!.map((r) => r.action)).toEqual(expect.arrayContaining(['login_failed', 'logout']));
});

test('workspace events: members, roles, invitations, settings, billing, export; read by owners and admins only', async () => {
  const owner = await signedUp('owner');
  const admin = await signedUp('admin');
  const member = await signedUp('member');
  const created = await owner.client.rpc('create_workspace', { name: 'Audited' });
  expect(created.error).toBeNull();
  const ws = (created.data as { id: string }).id;
  const svc = server.pool;
  await svc.query(`insert into public.workspace_members values ($1, $2, 'member'), ($1, $3, 'member')`, [
    ws,
    admin.id,
    member.id,
  ]);
  expect(
    (await owner.client.rpc('update_member_role', { workspace_id: ws, user_id: admin.id, role: 'admin' }))
      .error,
  ).toBeNull();
  const invited = await owner.client.rpc('invite_member', {
    workspace_id: ws,
    email: address('guest'),
    role: 'member',
  });
  expect(invited.error).toBeNull();
  const invitationId = (invited.data as { invitation_id: string }).invitation_id;
  expect((await owner.client.rpc('revoke_invitation', { invitation_id: invitationId })).error).toBeNull();
  expect((await admin.client.from('workspaces').update({ name: 'Audited 2' }).eq('id', ws)).error).toBeNull();

  // billing moves by the signed webhook
  const tag = Math.random().toString(36).slice(2, 10);
  const t = Math.floor(Date.now() / 1000);
  await deliverEvent(
    server,
    envelope('checkout.session.completed', checkoutCompleted(ws, `cus_${tag}`, `sub_${tag}`), { created: t }),
  );
  const moved = await deliverEvent(
    server,
    envelope(
      'customer.subscription.updated',
      subscriptionObject({
        id: `sub_${tag}`,
        customer: `cus_${tag}`,
        workspaceId: ws,
        periodEnd: t + 30 * 86400,
      }),
      { created: t + 1 },
    ),
  );
  expect(moved.body.outcome).toBe('processed');

  // an admin exports the log: the export is itself a line
  const exported = await admin.client.rpc('record_audit_export', {
    workspace_id: ws,
    format: 'csv',
    row_count: 9,
  });
  expect(exported.error).toBeNull();
  // the member is removed last
  expect(
    (await owner.client.from('workspace_members').delete().eq('workspace_id', ws).eq('user_id', member.id))
      .error,
  ).toBeNull();

  const lines = await linesFor('workspace_id', ws);
  const roleChange = line(lines, 'member.role_changed');
  expect(roleChange).toMatchObject({
    actor_id: owner.id,
    user_id: admin.id,
    details: { from: 'member', to: 'admin' },
  });
  expect(roleChange.user_agent).toBe(AGENT);
  expect(roleChange.ip_address).toMatch(/127\.0\.0\.1|::1/);
  expect(line(lines, 'invitation.created').actor_id).toBe(owner.id);
  expect(line(lines, 'invitation.revoked').actor_id).toBe(owner.id);
  expect(line(lines, 'workspace.settings_changed')).toMatchObject({
    actor_id: admin.id,
    details: { changes: { name: { from: 'Audited', to: 'Audited 2' } } },
  });
  expect(line(lines, 'billing.plan_changed')).toMatchObject({
    actor_type: 'system',
    details: { from: 'free', to: 'pro' },
  });
  expect(line(lines, 'audit.exported')).toMatchObject({
    actor_id: admin.id,
    details: { format: 'csv', rows: 9 },
  });
  expect(line(lines, 'member.removed')).toMatchObject({ actor_id: owner.id, user_id: member.id });

  // an invitation accepted by its addressee, who then leaves
  const guest = await signedUp('guest');
  const toGuest = await owner.client.rpc('invite_member', {
    workspace_id: ws,
    email: guest.email,
    role: 'viewer',
  });
  expect(toGuest.error).toBeNull();
  const accepted = await guest.client.rpc('accept_invitation', {
    token: (toGuest.data as { token: string }).token,
  });
  expect(accepted.error).toBeNull();
  expect((await guest.client.rpc('leave_workspace', { workspace_id: ws })).error).toBeNull();
  const later = await linesFor('workspace_id', ws);
  expect(line(later, 'invitation.accepted')).toMatchObject({
    actor_id: guest.id,
    user_id: guest.id,
    user_agent: AGENT,
  });
  expect(line(later, 'member.left')).toMatchObject({ actor_id: guest.id, user_id: guest.id });

  // owners and admins read it through the data API; a member who is not an admin reads nothing
  for (const reader of [owner, admin]) {
    const read = await reader.client.from('audit_events').select('action').eq('workspace_id', ws);
    expect(read.error).toBeNull();
    expect(read.data!.map((r) => r.action)).toContain('member.role_changed');
  }
  const stranger = await signedUp('viewer');
  await svc.query(`insert into public.workspace_members values ($1, $2, 'member')`, [ws, stranger.id]);
  const refused = await stranger.client.from('audit_events').select('action').eq('workspace_id', ws);
  expect(refused.data).toEqual([]);
  const notExported = await stranger.client.rpc('record_audit_export', {
    workspace_id: ws,
    format: 'csv',
    row_count: 1,
  });
  expect(notExported.error?.code).toBe('PT404');
});

test('no role can change or remove a line: anon, authenticated, service_role, the service connection', async () => {
  const me = await signedUp('immutable');
  const [{ id }] = (
    await server.pool.query<{ id: string }>(`select id from public.audit_events where user_id = $1 limit 1`, [
      me.id,
    ])
  ).rows as [{ id: string }];
  const admin = server.adminClient();
  for (const [who, client] of [
    ['anon', browser()],
    ['authenticated', me.client],
    ['service_role', admin],
  ] as const) {
    const updated = await client.from('audit_events').update({ action: 'forged' }).eq('id', id).select();
    const deleted = await client.from('audit_events').delete().eq('id', id).select();
    expect(updated.error ?? updated.data?.length === 0, who).toBeTruthy();
    expect(deleted.error ?? deleted.data?.length === 0, who).toBeTruthy();
  }
  // service_role is refused outright, not merely filtered
  const forged = await admin.from('audit_events').update({ action: 'forged' }).eq('id', id);
  expect(forged.error?.code).toBe('42501');
  // the service's own connection owns the table and is refused by the trigger
  await expect(
    server.pool.query(`update public.audit_events set action = 'forged' where id = $1`, [id]),
  ).rejects.toMatchObject({ code: '42501' });
  await expect(
    server.pool.query(`delete from public.audit_events where id = $1`, [id]),
  ).rejects.toMatchObject({ code: '42501' });
  await expect(server.pool.query(`truncate public.audit_events`)).rejects.toMatchObject({ code: '42501' });
  // setting the retention window by hand does not open fresh lines either
  await expect(
    server.pool.query(
      `with s as (select set_config('tenantry.audit_purge_before', (now() + interval '1 day')::text, false))
       delete from public.audit_events where id = $1 and exists (select 1 from s)`,
      [id],
    ),
  ).rejects.toMatchObject({ code: '42501' });
  await server.pool.query(`select set_config('tenantry.audit_purge_before', '', false)`);
  const still = await server.pool.query(`select action from public.audit_events where id = $1`, [id]);
  expect(still.rows[0]).toMatchObject({ action: expect.not.stringMatching('forged') });
});

test('an account deleted by the admin API leaves its line, by the service, kept after the account', async () => {
  const gone = await signedUp('deleted');
  expect((await server.adminClient().auth.admin.deleteUser(gone.id)).error).toBeNull();
  expect(line(await linesFor('user_id', gone.id), 'user_deleted')).toMatchObject({
    actor_type: 'service',
    actor_id: null,
    details: { soft: false },
  });
});

test('retention removes the lines older than the window and only those', async () => {
  const user = (await signedUp('retention')).id;
  await server.pool.query(
    `insert into public.audit_events (actor_type, user_id, action, created_at)
     values ('system', $1, 'old_line', now() - interval '400 days'), ('system', $1, 'recent_line', now() - interval '300 days')`,
    [user],
  );
  const removed = await purgeAuditEvents(server.pool, 365);
  expect(removed).toBeGreaterThanOrEqual(1);
  const left = (await linesFor('user_id', user)).map((l) => l.action);
  expect(left).not.toContain('old_line');
  expect(left).toEqual(expect.arrayContaining(['recent_line', 'login']));
});

test('passkeys added and removed leave their lines', async () => {
  const origin = 'https://app.example.com';
  const site = await startTestServer({ APP_URL: origin });
  try {
    const client = createClient(site.url, site.config.projectApiKey, {
      auth: {
        persistSession: false,
        autoRefreshToken: false,
        detectSessionInUrl: false,
        experimental: { passkey: true },
      },
      realtime: { transport: ws as unknown as typeof WebSocket },
      global: { headers: { 'user-agent': AGENT } },
    });
    const signed = await client.auth.signUp({ email: address('passkey'), password: PASSWORD });
    expect(signed.error).toBeNull();
    const userId = signed.data.user!.id;
    const options = await client.auth.passkey.startRegistration();
    expect(options.error).toBeNull();
    const created = await client.auth.passkey.verifyRegistration({
      challengeId: options.data!.challenge_id,
      credential: new SoftwareAuthenticator(origin, 'app.example.com').create(options.data!.options) as never,
    });
    expect(created.error).toBeNull();
    expect((await client.auth.passkey.delete({ passkeyId: created.data!.id })).error).toBeNull();
    const lines = await site.pool.query<Line>(
      `select action, actor_id, user_agent, target_id from public.audit_events where user_id = $1 order by id`,
      [userId],
    );
    const actions = lines.rows.map((r) => r.action);
    expect(actions).toEqual(expect.arrayContaining(['passkey_created', 'passkey_deleted']));
    for (const r of lines.rows.filter((l) => l.action.startsWith('passkey_'))) {
      expect(r).toMatchObject({ actor_id: userId, user_agent: AGENT });
    }
  } finally {
    await site.close();
  }
});
