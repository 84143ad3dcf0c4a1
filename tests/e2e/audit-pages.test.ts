// The audit log in the web app, on the real process: an owner's /w/<slug>/audit lists the
// workspace's events (filtered by action), a member who is not an admin is told the log is not
// for them and cannot export it, the CSV and JSON exports hold the lines and are themselves
// recorded, and the Security page shows the account's recent security activity.
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  sessionCookieName,
  sessionCookies,
  type StoredSession,
} from '../../src/server/web-session/cookies.js';
import { startApp, type AppProcess } from '../support/app-process.js';

let app: AppProcess;
beforeAll(async () => {
  app = await startApp({ RATE_LIMIT_SIGNIN_PER_ADDRESS: '1000' });
}, 300_000);
afterAll(async () => app?.stop());

const PASSWORD = 'correct horse battery';

async function signIn(email: string): Promise<{ cookie: string; token: string; id: string }> {
  const service = app.env.SERVICE_ROLE_KEY!;
  const created = await fetch(`${app.url}/auth/v1/admin/users`, {
    method: 'POST',
    headers: { apikey: service, authorization: `Bearer ${service}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD, email_confirm: true }),
  });
  expect(created.status).toBe(200);
  const answer = await fetch(`${app.url}/auth/v1/token?grant_type=password`, {
    method: 'POST',
    headers: {
      apikey: app.env.PROJECT_API_KEY!,
      'content-type': 'application/json',
      'user-agent': 'AuditPages/1.0',
    },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  expect(answer.status).toBe(200);
  const session = (await answer.json()) as StoredSession & { user: { id: string } };
  const cookie = sessionCookies(sessionCookieName(app.url), session, [], false)
    .map((c) => `${c.name}=${c.value}`)
    .join('; ');
  return { cookie, token: session.access_token, id: session.user.id };
}

const rest = (token: string, path: string, init: RequestInit = {}) =>
  fetch(`${app.url}/rest/v1/${path}`, {
    ...init,
    headers: {
      apikey: app.env.PROJECT_API_KEY!,
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      ...(init.headers as Record<string, string>),
    },
  });

const get = (path: string, cookie: string) =>
  fetch(`${app.url}${path}`, { headers: { cookie }, redirect: 'manual' });

test('owners read and export the log; members cannot; the Security page shows recent activity', async () => {
  const tag = Date.now();
  const owner = await signIn(`audit-owner-${tag}@example.com`);
  const member = await signIn(`audit-member-${tag}@example.com`);
  const made = await rest(owner.token, 'rpc/create_workspace', {
    method: 'POST',
    body: JSON.stringify({ name: 'Audit Pages' }),
  });
  expect(made.status).toBe(200);
  const ws = (await made.json()) as { id: string; slug: string };
  const invited = await rest(owner.token, 'rpc/invite_member', {
    method: 'POST',
    body: JSON.stringify({ workspace_id: ws.id, email: `guest-${tag}@example.com`, role: 'member' }),
  });
  expect(invited.status).toBe(200);
  const service = app.env.SERVICE_ROLE_KEY!;
  // the member joins through the service (as an accepted invitation would make them)
  const joined = await fetch(`${app.url}/rest/v1/workspace_members`, {
    method: 'POST',
    headers: { apikey: service, authorization: `Bearer ${service}`, 'content-type': 'application/json' },
    body: JSON.stringify({ workspace_id: ws.id, user_id: member.id, role: 'member' }),
  });
  expect(joined.status).toBe(201);

  // the settings page leads owners and admins to the log, and not the others
  expect(await (await get(`/w/${ws.slug}/settings`, owner.cookie)).text()).toContain(
    `href="/w/${ws.slug}/audit"`,
  );
  expect(await (await get(`/w/${ws.slug}/settings`, member.cookie)).text()).not.toContain(
    `/w/${ws.slug}/audit"`,
  );
  const page = await get(`/w/${ws.slug}/audit`, owner.cookie);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain('data-action="invitation.created"');
  expect(html).toContain('data-action="member.added"');
  const filtered = await (await get(`/w/${ws.slug}/audit?action=invitation.created`, owner.cookie)).text();
  expect(filtered).toContain('data-action="invitation.created"');
  expect(filtered).not.toContain('data-action="member.added"');
  // an actor filter shaped like an id but not one is read as part of an address, not a failure
  const byActor = await get(`/w/${ws.slug}/audit?actor=${'-'.repeat(36)}`, owner.cookie);
  expect(byActor.status).toBe(200);
  expect(await byActor.text()).toContain('No events match.');
  const byId = await (await get(`/w/${ws.slug}/audit?actor=${owner.id}`, owner.cookie)).text();
  expect(byId).toContain('data-action="invitation.created"');

  const csv = await get(`/w/${ws.slug}/audit/export?format=csv&action=invitation.created`, owner.cookie);
  expect(csv.status).toBe(200);
  expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
  const csvText = await csv.text();
  expect(csvText.split('\r\n')[0]).toBe(
    'created_at,action,actor_id,actor_type,actor_email,user_id,target_type,target_id,ip_address,user_agent,details',
  );
  expect(csvText).toContain(`invitation.created,${owner.id},user,audit-owner-${tag}@example.com`);
  const json = await get(`/w/${ws.slug}/audit/export?format=json`, owner.cookie);
  expect(json.status).toBe(200);
  const lines = (await json.json()) as { action: string }[];
  expect(lines.map((l) => l.action)).toEqual(
    expect.arrayContaining(['invitation.created', 'member.added', 'audit.exported']),
  );
  expect((await get(`/w/${ws.slug}/audit/export?format=xml`, owner.cookie)).status).toBe(400);

  // both exports are in the log, by the owner
  const exports = await rest(
    owner.token,
    `audit_events?workspace_id=eq.${ws.id}&action=eq.audit.exported&select=actor_id,details`,
  );
  const recorded = (await exports.json()) as { actor_id: string; details: { format: string } }[];
  expect(recorded.map((r) => r.details.format).sort()).toEqual(['csv', 'json']);
  expect(recorded.every((r) => r.actor_id === owner.id)).toBe(true);

  // a member who is not an admin sees no log and cannot export it
  const theirs = await get(`/w/${ws.slug}/audit`, member.cookie);
  expect(theirs.status).toBe(200);
  const theirHtml = await theirs.text();
  expect(theirHtml).toContain('Only owners and admins see the audit log');
  expect(theirHtml).not.toContain('data-action=');
  expect((await get(`/w/${ws.slug}/audit/export?format=csv`, member.cookie)).status).toBe(403);

  // the Security page's recent activity: this sign-in, from this address and browser
  const security = await (await get('/settings/security', owner.cookie)).text();
  expect(security).toContain('Recent security activity');
  expect(security).toContain('data-action="login"');
  expect(security).toContain('AuditPages/1.0');
}, 120_000);
