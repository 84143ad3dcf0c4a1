// The security audit log's identity lines beyond sign-in: an e-mail change confirmed (each of the
// two links, then the switch), refused codes and links at /verify (e-mail and phone), and an
// administrator's changes to an account (update, ban, unban), each with actor, address and user
// agent, through supabase-js against a server that mails and texts for real.
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import ws from 'ws';
import { startAuthMailbox, allowAnotherEmail, type AuthMailbox } from '../support/auth-mail.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startTwilioStandIn, twilioEnv, type TwilioStandIn } from '../support/twilio-stand-in.js';

const PASSWORD = 'correct horse battery';
const AGENT = 'AuditBrowser/2.0 (tests)';
const LOOPBACK = /^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/;

let server: TestServer;
let mailbox: AuthMailbox;
let twilio: TwilioStandIn;
beforeAll(async () => {
  twilio = await startTwilioStandIn();
  server = await startTestServer({
    ...twilioEnv(twilio),
    AUTH_AUTOCONFIRM: 'false',
    SITE_URL: 'https://app.example.com',
    RATE_LIMIT_EMAIL_SENT: '1000',
  });
  mailbox = await startAuthMailbox(server.pool);
});
afterAll(async () => {
  await mailbox?.close();
  await server?.close();
  await twilio?.close();
});

let counter = 0;
const address = (label: string) => `audit-id-${label}-${++counter}-${Date.now()}@example.com`;
const uniquePhone = () => `+1555${String((Date.now() % 100000) * 100 + (++counter % 100)).padStart(7, '0')}`;

/** A supabase-js client that names its user agent, as a browser would. */
function browser(): SupabaseClient {
  return createClient(server.url, server.config.projectApiKey, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    realtime: { transport: ws as unknown as typeof WebSocket },
    global: { headers: { 'user-agent': AGENT } },
  });
}

/** A confirmed account, signed in from a browser. */
async function signedIn(label: string) {
  const email = address(label);
  const created = await server
    .adminClient()
    .auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
  expect(created.error).toBeNull();
  const client = browser();
  expect((await client.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
  return { client, email, id: created.data.user!.id };
}

interface Line {
  action: string;
  actor_id: string | null;
  actor_type: string;
  user_id: string | null;
  ip_address: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
}

async function linesOf(userId: string, action: string): Promise<Line[]> {
  const r = await server.pool.query<Line>(
    `select action, actor_id, actor_type, user_id, host(ip_address) as ip_address, user_agent, details
     from public.audit_events where user_id = $1 and action = $2 order by id`,
    [userId, action],
  );
  return r.rows;
}

/** Follows an e-mail's link as the browser would: GET /verify with the browser's user agent. */
async function follow(link: string): Promise<URL> {
  const url = new URL(link);
  const res = await fetch(`${server.url}${url.pathname}${url.search}`, {
    redirect: 'manual',
    headers: { 'user-agent': AGENT },
  });
  expect(res.status).toBe(303);
  return new URL(res.headers.get('location')!);
}

test('an e-mail change confirmed from each address, then in force, is a user_modified line each time', async () => {
  const me = await signedIn('change');
  const next = address('next');
  expect((await me.client.auth.updateUser({ email: next })).error).toBeNull();
  const toOld = await mailbox.latest(me.email);
  const toNew = await mailbox.latest(next);

  await follow(toNew.link!);
  const afterFirst = (await linesOf(me.id, 'user_modified')).filter(
    (l) => l.details.email_change !== 'requested',
  );
  expect(afterFirst.map((l) => l.details)).toEqual([
    { email_change: 'confirmed_one', confirmed: 'new_address' },
  ]);

  const second = await follow(toOld.link!);
  expect(new URLSearchParams(second.hash.slice(1)).get('access_token')).toBeTruthy();
  const confirmations = (await linesOf(me.id, 'user_modified')).filter(
    (l) => l.details.email_change !== 'requested',
  );
  expect(confirmations.map((l) => l.details)).toEqual([
    { email_change: 'confirmed_one', confirmed: 'new_address' },
    { email_change: 'completed', confirmed: 'current_address' },
  ]);
  for (const l of confirmations) {
    expect(l).toMatchObject({ actor_type: 'user', actor_id: me.id, user_agent: AGENT });
    expect(l.ip_address).toMatch(LOOPBACK);
  }
  // no address, link or code in the line
  expect(JSON.stringify(confirmations)).not.toContain(next);
});

test('wrong and expired codes and a bad link at /verify are login_failed lines and change nothing else', async () => {
  const me = await signedIn('codes');
  await allowAnotherEmail(server);
  expect(
    (await browser().auth.signInWithOtp({ email: me.email, options: { shouldCreateUser: false } })).error,
  ).toBeNull();
  const mail = await mailbox.latest(me.email);
  const before = await server.pool.query(`select updated_at, last_sign_in_at from auth.users where id = $1`, [
    me.id,
  ]);

  // a wrong code
  const wrong = await browser().auth.verifyOtp({ email: me.email, token: '000000', type: 'email' });
  expect(wrong.error?.status).toBe(403);
  // the right code once expired
  await server.pool.query(
    `update auth.one_time_tokens set expires_at = now() - interval '1 second' where user_id = $1`,
    [me.id],
  );
  const expired = await browser().auth.verifyOtp({ email: me.email, token: mail.code!, type: 'magiclink' });
  expect(expired.error?.status).toBe(403);
  // a link that names nothing
  const link = await browser().auth.verifyOtp({ token_hash: 'f'.repeat(56), type: 'recovery' });
  expect(link.error).not.toBeNull();
  // an address with no account
  const nobody = address('nobody');
  expect(
    (await browser().auth.verifyOtp({ email: nobody, token: '123456', type: 'email' })).error,
  ).not.toBeNull();

  const failed = await linesOf(me.id, 'login_failed');
  expect(failed.map((l) => l.details)).toEqual([
    { method: 'verify', type: 'email', reason: 'invalid_code' },
    { method: 'verify', type: 'magiclink', reason: 'no_live_code' },
  ]);
  for (const l of failed) {
    expect(l).toMatchObject({ actor_type: 'anonymous', actor_id: null, user_agent: AGENT });
    expect(l.ip_address).toMatch(LOOPBACK);
  }
  const anonymous = await server.pool.query<Line>(
    `select details from public.audit_events where action = 'login_failed' and user_id is null
       and (details->>'email' = $1 or details->>'reason' = 'invalid_link') order by id`,
    [nobody],
  );
  expect(anonymous.rows.map((r) => r.details)).toEqual(
    expect.arrayContaining([
      { method: 'verify', type: 'recovery', reason: 'invalid_link' },
      { method: 'verify', type: 'email', reason: 'no_live_code', email: nobody },
    ]),
  );
  // the account itself is as it was, and no code is in any line
  const after = await server.pool.query(`select updated_at, last_sign_in_at from auth.users where id = $1`, [
    me.id,
  ]);
  expect(after.rows[0]).toEqual(before.rows[0]);
  expect(JSON.stringify(failed)).not.toContain(mail.code!);
});

test('wrong phone codes (sms, phone_change) are login_failed lines about the number’s account', async () => {
  const phone = uniquePhone();
  const client = browser();
  const signedUp = await client.auth.signUp({ phone, password: PASSWORD });
  expect(signedUp.error).toBeNull();
  const userId = signedUp.data.user!.id;
  // the texted code's number typed back with a wrong code, then a phone change nobody asked for
  const wrong = await client.auth.verifyOtp({ phone, token: '000000', type: 'sms' });
  expect(wrong.error?.status).toBe(403);
  const changed = await client.auth.verifyOtp({ phone, token: '000000', type: 'phone_change' });
  expect(changed.error?.status).toBe(403);
  // the right code still signs in: the failures changed nothing but their count
  const code = twilio.to(phone).at(-1)!.code!;
  expect((await client.auth.verifyOtp({ phone, token: code, type: 'sms' })).error).toBeNull();
  const failed = await linesOf(userId, 'login_failed');
  expect(failed.map((l) => l.details)).toEqual([
    { method: 'verify', type: 'sms', reason: 'invalid_code' },
    { method: 'verify', type: 'phone_change', reason: 'no_live_code' },
  ]);
  expect(failed[0]).toMatchObject({ actor_type: 'anonymous', user_agent: AGENT });
});

test('an administrator’s update, ban and unban are user_modified lines by the service', async () => {
  const them = await signedIn('admin');
  const admin = createClient(server.url, server.config.serviceRoleKey, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    realtime: { transport: ws as unknown as typeof WebSocket },
    global: { headers: { 'user-agent': AGENT } },
  }).auth.admin;
  expect((await admin.updateUserById(them.id, { user_metadata: { plan: 'gold' } })).error).toBeNull();
  expect((await admin.updateUserById(them.id, { ban_duration: '24h' })).error).toBeNull();
  expect((await admin.updateUserById(them.id, { ban_duration: 'none' })).error).toBeNull();
  // a refused change (an address another account has) leaves no line
  const other = await signedIn('taken');
  expect((await admin.updateUserById(them.id, { email: other.email })).error).not.toBeNull();

  const lines = (await linesOf(them.id, 'user_modified')).filter((l) => l.details.by === 'admin');
  expect(
    lines.map((l) => ({ ...l.details, banned_until: l.details.banned_until ? 'set' : undefined })),
  ).toEqual([
    { by: 'admin', fields: ['user_metadata'], banned_until: undefined },
    { by: 'admin', fields: ['ban_duration'], ban: 'banned', banned_until: 'set' },
    { by: 'admin', fields: ['ban_duration'], ban: 'unbanned', banned_until: undefined },
  ]);
  const until = Date.parse(lines[1]!.details.banned_until as string);
  expect(Math.abs(until - (Date.now() + 24 * 3600_000))).toBeLessThan(60_000);
  for (const l of lines) {
    expect(l).toMatchObject({ actor_type: 'service', actor_id: null, user_agent: AGENT });
    expect(l.ip_address).toMatch(LOOPBACK);
  }
});

test('a link to an address the account no longer has is a login_failed line about that account', async () => {
  const me = await signedIn('moved');
  await allowAnotherEmail(server);
  expect((await browser().auth.resetPasswordForEmail(me.email)).error).toBeNull();
  const mail = await mailbox.latest(me.email);
  await server.pool.query(`update auth.users set email = $2 where id = $1`, [me.id, address('moved-to')]);
  const landed = await follow(mail.link!);
  expect(new URLSearchParams(landed.hash.slice(1)).get('error_code')).toBeTruthy();
  const failed = await linesOf(me.id, 'login_failed');
  expect(failed.map((l) => l.details)).toEqual([
    { method: 'verify', type: 'recovery', reason: 'address_changed' },
  ]);
  expect(failed[0]).toMatchObject({ actor_type: 'anonymous', user_agent: AGENT });
});
