// The operator console (/admin) on the real process: nobody but staff with a second-factor session
// gets in (404 for everyone else, pages, export and server actions POSTed directly alike); staff
// whose session has not passed the second factor are sent to it and their actions refused; staff
// at aal2 search accounts, ban (the account cannot sign in), end sessions (the token stops
// working), delete, and put a failed e-mail back in the queue, each leaving an audit line with the
// operator as actor, marked as a console action.
import { spawn } from 'node:child_process';
import { createClient, type Session } from '@supabase/supabase-js';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, expect, test } from 'vitest';
import ws from 'ws';
import { createPool, type Pool } from '../../src/server/db/pool.js';
import { banUser, deleteUser, OperatorRefused } from '../../src/server/operator/actions.js';
import { grantStaff } from '../../src/server/operator/staff.js';
import { sessionCookieName, sessionCookies } from '../../src/server/web-session/cookies.js';
import { startApp, type AppProcess } from '../support/app-process.js';
import { launchBrowser } from '../support/browser.js';
import { inEveryLook, seriousViolations, shoot, sidewaysOverflow } from '../support/browser-checks.js';
import { confirmDialog } from '../support/browser-suite.js';
import { flashAfter } from '../support/flash.js';

let app: AppProcess;
let pool: Pool;
beforeAll(async () => {
  app = await startApp({ RATE_LIMIT_SIGNIN_PER_ADDRESS: '1000' });
  pool = createPool(app.env.DATABASE_URL!);
}, 300_000);
afterAll(async () => {
  await pool?.end();
  await app?.stop();
});

const PASSWORD = 'correct horse battery';
const client = () =>
  createClient(app.url, app.env.PROJECT_API_KEY!, {
    auth: { persistSession: false, autoRefreshToken: false },
    realtime: { transport: ws as unknown as typeof WebSocket },
  });
const codeFor = (secret: string) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate();
const cookieOf = (session: Session) =>
  sessionCookies(sessionCookieName(app.url), session as never, [], false)
    .map((c) => `${c.name}=${c.value}`)
    .join('; ');

async function account(email: string): Promise<{ id: string; session: Session; cookie: string }> {
  const service = app.env.SERVICE_ROLE_KEY!;
  const created = await fetch(`${app.url}/auth/v1/admin/users`, {
    method: 'POST',
    headers: { apikey: service, authorization: `Bearer ${service}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD, email_confirm: true }),
  });
  expect(created.status).toBe(200);
  const { data, error } = await client().auth.signInWithPassword({ email, password: PASSWORD });
  expect(error).toBeNull();
  return { id: data.user!.id, session: data.session!, cookie: cookieOf(data.session!) };
}

/** Staff: an account with a verified TOTP factor; its aal2 session and the factor's secret. */
async function staffMember(email: string) {
  const staff = await account(email);
  const supabase = client();
  await supabase.auth.setSession(staff.session);
  const enrolled = await supabase.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Phone' });
  expect(enrolled.error).toBeNull();
  const verified = await supabase.auth.mfa.challengeAndVerify({
    factorId: enrolled.data!.id,
    code: codeFor(enrolled.data!.totp.secret),
  });
  expect(verified.error).toBeNull();
  const session = (await supabase.auth.getSession()).data.session!;
  expect(await grantStaff(pool, email, 'test')).toBe(true);
  return {
    id: staff.id,
    cookie: cookieOf(session),
    token: session.access_token,
    secret: enrolled.data!.totp.secret,
  };
}

const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { session_id: string };

const get = (path: string, cookie = '') =>
  fetch(`${app.url}${path}`, { headers: cookie ? { cookie } : {}, redirect: 'manual' });

/** The server actions' ids in a page's forms (progressive enhancement names them in hidden inputs). */
async function actionIds(path: string, cookie: string): Promise<Map<string, string>> {
  const html = await (await get(path, cookie)).text();
  const ids = new Map<string, string>();
  // each form: its action's id, then the visible fields that tell the forms apart
  for (const form of html.split('<form').slice(1)) {
    const id = /name="\$ACTION_ID_([0-9a-f]+)"/.exec(form)?.[1];
    const label = />([A-Z][A-Za-z ]+)<\/button>/.exec(form)?.[1];
    if (id && label) ids.set(label, id);
  }
  return ids;
}

/** POSTs a server action as a page's form would, with this cookie. */
function postAction(path: string, actionId: string, fields: Record<string, string>, cookie: string) {
  const form = new FormData();
  form.set(`$ACTION_ID_${actionId}`, '');
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  return fetch(`${app.url}${path}`, {
    method: 'POST',
    body: form,
    headers: { cookie, origin: app.url, 'sec-fetch-site': 'same-origin' },
    redirect: 'manual',
  });
}

const auditLines = async (action: string, userId: string) =>
  (
    await pool.query<{ actor_id: string; actor_type: string; details: Record<string, unknown> }>(
      'select actor_id, actor_type, details from public.audit_events where action = $1 and user_id = $2',
      [action, userId],
    )
  ).rows;

test('only staff at aal2 get in; ban, session end and delete work and are audited', async () => {
  const tag = Date.now();
  const staff = await staffMember(`staff-${tag}@example.com`);
  const outsider = await account(`outsider-${tag}@example.com`);
  const target = await account(`target-${tag}@example.com`);

  // nobody signed in, and a signed-in account that is not staff: the console does not exist
  for (const path of ['/admin', '/admin/users', `/admin/users/${target.id}`, '/admin/audit', '/admin/mail']) {
    expect((await get(path)).status).toBe(404);
    expect((await get(path, outsider.cookie)).status).toBe(404);
  }
  expect((await get('/admin/audit/export?format=csv', outsider.cookie)).status).toBe(404);

  // staff at aal2: search finds the account; its page offers the actions
  const found = await get(`/admin/users?q=${encodeURIComponent(`target-${tag}`)}`, staff.cookie);
  expect(found.status).toBe(200);
  const list = await found.text();
  expect(list).toContain(`data-user="${target.id}"`);
  expect(list).not.toContain(`data-user="${outsider.id}"`);
  const ids = await actionIds(`/admin/users/${target.id}`, staff.cookie);
  expect([...ids.keys()]).toEqual(expect.arrayContaining(['End session', 'End all sessions', 'Ban']));
  const page = `/admin/users/${target.id}`;

  // the same actions POSTed directly by someone not staff: 404, and nothing changes
  const notStaff = await postAction(
    page,
    ids.get('Ban')!,
    { user_id: target.id, duration: '24h' },
    outsider.cookie,
  );
  expect(notStaff.status).toBe(404);
  const bannedNow = async () =>
    (await pool.query('select 1 from auth.users where id = $1 and banned_until > now()', [target.id]))
      .rowCount;
  expect(await bannedNow()).toBe(0);

  // staff whose session is at aal1 (factor set up, not passed): sent to the second step, refused
  const { data: weak } = await client().auth.signInWithPassword({
    email: `staff-${tag}@example.com`,
    password: PASSWORD,
  });
  const weakCookie = cookieOf(weak.session!);
  const stepUp = await get('/admin/users', weakCookie);
  expect(stepUp.status).toBe(307);
  expect(stepUp.headers.get('location')).toContain('/sign-in/two-step?next=%2Fadmin%2Fusers');
  const weakBan = await postAction(
    page,
    ids.get('Ban')!,
    { user_id: target.id, duration: '24h' },
    weakCookie,
  );
  expect(weakBan.status).toBeLessThan(400);
  expect(await bannedNow()).toBe(0);
  expect(await auditLines('operator.user_banned', target.id)).toEqual([]);

  // ending one session: the target's access token stops working at once
  const before = await fetch(`${app.url}/auth/v1/user`, {
    headers: { apikey: app.env.PROJECT_API_KEY!, authorization: `Bearer ${target.session.access_token}` },
  });
  expect(before.status).toBe(200);
  const sessionId = JSON.parse(
    Buffer.from(target.session.access_token.split('.')[1]!, 'base64url').toString(),
  ).session_id as string;
  const ended = await postAction(
    page,
    ids.get('End session')!,
    { user_id: target.id, session_id: sessionId },
    staff.cookie,
  );
  expect(ended.status).toBe(303);
  const after = await fetch(`${app.url}/auth/v1/user`, {
    headers: { apikey: app.env.PROJECT_API_KEY!, authorization: `Bearer ${target.session.access_token}` },
  });
  expect(after.status).toBe(401);
  expect(await auditLines('operator.session_revoked', target.id)).toEqual([
    expect.objectContaining({ actor_id: staff.id, actor_type: 'user', details: { operator: true } }),
  ]);

  // a ban: sign-in refused while it lasts, and the line names the operator
  const banned = await postAction(
    page,
    ids.get('Ban')!,
    { user_id: target.id, duration: '24h' },
    staff.cookie,
  );
  expect(banned.status).toBe(303);
  expect(await bannedNow()).toBe(1);
  const again = await client().auth.signInWithPassword({
    email: `target-${tag}@example.com`,
    password: PASSWORD,
  });
  expect(again.error?.code).toBe('user_banned');
  const banLines = await auditLines('operator.user_banned', target.id);
  expect(banLines).toHaveLength(1);
  expect(banLines[0]).toMatchObject({ actor_id: staff.id, actor_type: 'user', details: { operator: true } });

  // bad input: a malformed id changes nothing and says so
  const bad = await postAction(page, ids.get('Ban')!, { user_id: 'nope', duration: '24h' }, staff.cookie);
  expect(bad.status).toBe(303);

  // unban, then delete (asked first in the page; the action itself is what is tested here)
  const unbanIds = await actionIds(page, staff.cookie);
  expect(
    (await postAction(page, unbanIds.get('Lift the ban')!, { user_id: target.id }, staff.cookie)).status,
  ).toBe(303);
  expect(await bannedNow()).toBe(0);
  expect(await auditLines('operator.user_unbanned', target.id)).toHaveLength(1);

  // delete: asked first in a dialog on the page; here the console's own delete, as the action runs it
  const operator = {
    userId: staff.id,
    sessionId: claimsOf(staff.token).session_id,
    context: { ip: null, userAgent: null },
  };
  await deleteUser(pool, operator, target.id);
  expect((await pool.query('select 1 from auth.users where id = $1', [target.id])).rowCount).toBe(0);
  expect(await auditLines('operator.user_deleted', target.id)).toEqual([
    expect.objectContaining({ actor_id: staff.id, actor_type: 'user' }),
  ]);
  // someone not staff cannot use it either, even from server code
  await expect(
    deleteUser(
      pool,
      { ...operator, userId: outsider.id, sessionId: 'ffffffff-ffff-4fff-bfff-ffffffffffff' },
      staff.id,
    ),
  ).rejects.toBeInstanceOf(OperatorRefused);
}, 180_000);

test('in a browser: staff search, end sessions, ban and delete an account, retry mail, read and export the log', async () => {
  const tag = Date.now();
  const staff = await staffMember(`console-${tag}@example.com`);
  const target = await account(`journey-${tag}@example.com`);
  // a message the mail worker gave up on
  const failed = await pool.query<{ id: string }>(
    `insert into internal.outbox (kind, to_address, subject, text_body, message_id, attempts, last_error, failed_at)
     values ('invitation', $1, 'You are invited', 'hello', $2, 8, 'connection refused', now()) returning id`,
    [`journey-${tag}@example.com`, `<journey-${tag}@tenantry.test>`],
  );
  const browser = await launchBrowser();
  try {
    const cookies = staff.cookie.split('; ').map((c) => {
      const at = c.indexOf('=');
      return { name: c.slice(0, at), value: c.slice(at + 1), url: app.url };
    });
    const context = await browser.newContext();
    context.setDefaultTimeout(15_000);
    await context.addCookies(cookies);
    const page = await context.newPage();
    await page.goto(`${app.url}/admin`);
    await page.waitForURL(/\/admin\/users$/);
    await page.getByLabel('Search accounts by e-mail, phone or id').fill(`journey-${tag}`);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: `journey-${tag}@example.com` }).click();
    await page.waitForURL(new RegExp(`/admin/users/${target.id}$`));

    const ended = await flashAfter(page, () =>
      page.getByRole('button', { name: 'End all sessions' }).click(),
    );
    expect(ended).toEqual({ kind: 'notice', text: 'One session ended' });
    await page.getByLabel('Ban for').selectOption('7d');
    const banned = await flashAfter(page, () =>
      page.getByRole('button', { name: 'Ban', exact: true }).click(),
    );
    expect(banned.text).toBe('Account banned; its sessions have ended');
    await page.getByText(/Banned until/).waitFor();

    // the pages, in every look: no serious accessibility problem, nothing wider than the screen
    const pages: [string, string][] = [
      ['console-users', '/admin/users'],
      ['console-account', `/admin/users/${target.id}`],
      ['console-workspaces', '/admin/workspaces'],
      ['console-billing', '/admin/billing'],
      ['console-mail', '/admin/mail'],
      ['console-audit', '/admin/audit'],
    ];
    for (const [name, path] of pages) {
      await inEveryLook(browser, app.url, async (p, look) => {
        await p.context().addCookies(cookies);
        await p.goto(`${app.url}${path}`);
        await p.getByRole('heading', { level: 1 }).waitFor();
        expect(await seriousViolations(p), `${name} ${look}`).toEqual([]);
        expect((await sidewaysOverflow(p)).by, `${name} ${look}`).toBe(0);
        // The section tabs fit too, at phone width as well: none hides off to the side.
        const tabsHidden = await p
          .getByRole('navigation', { name: 'Operator console' })
          .evaluate((nav) => nav.scrollWidth - nav.clientWidth);
        expect(tabsHidden, `${name} ${look}: console tabs`).toBe(0);
        await shoot(p, `${name}-${look}`);
      });
    }

    // mail: the failed message is tried again
    await page.goto(`${app.url}/admin/mail?state=failed`);
    const retried = await flashAfter(page, () =>
      page.locator(`[data-mail="${failed.rows[0]!.id}"]`).getByRole('button', { name: 'Try again' }).click(),
    );
    expect(retried.text).toBe('Message queued to be sent again');
    const row = await pool.query('select failed_at, attempts from internal.outbox where id = $1', [
      failed.rows[0]!.id,
    ]);
    expect(row.rows[0]).toEqual({ failed_at: null, attempts: 0 });

    // delete, asked first
    await page.goto(`${app.url}/admin/users/${target.id}`);
    await page.getByRole('button', { name: 'Delete account' }).click();
    await shoot(page, 'console-confirm-delete', { fullPage: false });
    const deleted = await flashAfter(page, () => confirmDialog(page, 'Delete account'));
    expect(deleted.text).toBe('Account deleted');
    await page.waitForURL(/\/admin\/users$/);

    // the log: console actions only, by this operator; the export holds them and is itself a line
    await page.goto(`${app.url}/admin/audit?operator=1&actor=${encodeURIComponent(staff.id)}`);
    for (const action of [
      'operator.sessions_revoked',
      'operator.user_banned',
      'operator.mail_retried',
      'operator.user_deleted',
    ]) {
      await page.locator(`[data-action="${action}"]`).first().waitFor();
    }
    await page.goto(`${app.url}/admin/audit?operator=1&q=granted`);
    await page.getByText('Made staff for the operator console').first().waitFor();
    const csv = await get(`/admin/audit/export?format=csv&operator=1&actor=${staff.id}`, staff.cookie);
    expect(csv.status).toBe(200);
    const text = await csv.text();
    expect(text).toContain('operator.user_deleted');
    expect(text).toContain(`journey-${tag}@example.com`);
    expect((await get('/admin/audit/export?format=xml', staff.cookie)).status).toBe(400);
    const exports = await pool.query(
      `select 1 from public.audit_events where action = 'audit.exported' and actor_id = $1 and details->>'operator' = 'true'`,
      [staff.id],
    );
    expect(exports.rowCount).toBe(1);
    for (const action of ['operator.sessions_revoked', 'operator.user_banned', 'operator.user_deleted']) {
      expect(await auditLines(action, target.id), action).toEqual([
        expect.objectContaining({ actor_id: staff.id, actor_type: 'user' }),
      ]);
    }
  } finally {
    await browser.close();
  }
}, 300_000);

/** Runs `npm run operator:staff -- …args` against the app's database; its output and exit code. */
function staffCommand(...args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/server/commands/operator-staff.ts', ...args],
      {
        env: { ...process.env, ...app.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code: code ?? -1, out }));
  });
}

test('the command makes and unmakes staff; staff without a factor are sent to set one up; a workspace reads whole', async () => {
  const tag = Date.now();
  const plain = await account(`plain-${tag}@example.com`);
  expect((await get('/admin/users', plain.cookie)).status).toBe(404);

  const added = await staffCommand('add', `plain-${tag}@example.com`);
  expect(added).toEqual({ code: 0, out: `plain-${tag}@example.com is now staff\n` });
  expect((await staffCommand('add', `plain-${tag}@example.com`)).out).toContain('was already staff');
  expect((await staffCommand('list')).out).toContain(`plain-${tag}@example.com`);
  expect((await staffCommand('add', `nobody-${tag}@example.com`)).code).toBe(1);
  expect((await staffCommand('frobnicate')).code).toBe(2);
  const granted = await pool.query(
    `select actor_type, details from public.audit_events where action = 'user_modified' and user_id = $1`,
    [plain.id],
  );
  expect(granted.rows).toEqual([
    { actor_type: 'system', details: expect.objectContaining({ staff: 'granted', operator: true }) },
  ]);

  // the staff list is out of every request role's reach: not in the data API, refused in SQL
  for (const profile of [{}, { 'accept-profile': 'internal' }] as Record<string, string>[]) {
    const listed = await fetch(`${app.url}/rest/v1/operator_staff?select=*`, {
      headers: {
        apikey: app.env.PROJECT_API_KEY!,
        authorization: `Bearer ${plain.session.access_token}`,
        ...profile,
      },
    });
    expect(listed.status).toBeGreaterThanOrEqual(400);
  }
  for (const role of ['anon', 'authenticated']) {
    const conn = await pool.connect();
    try {
      await conn.query('begin');
      await conn.query(`set local role ${role}`);
      await expect(conn.query('select * from internal.operator_staff')).rejects.toMatchObject({
        code: '42501',
      });
    } finally {
      await conn.query('rollback');
      conn.release();
    }
  }

  // staff now, but no second factor at all: sent to set one up, never shown the console
  const noFactor = await get('/admin/users', plain.cookie);
  expect(noFactor.status).toBe(307);
  expect(noFactor.headers.get('location')).toBe('/settings/security');

  // a staff member at aal2 reads a workspace whole: members and roles, plan, usage
  const staff = await staffMember(`reader-${tag}@example.com`);
  const made = await fetch(`${app.url}/rest/v1/rpc/create_workspace`, {
    method: 'POST',
    headers: {
      apikey: app.env.PROJECT_API_KEY!,
      authorization: `Bearer ${plain.session.access_token}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name: `Console ${tag}` }),
  });
  expect(made.status).toBe(200);
  const ws = (await made.json()) as { id: string };
  const found = await (
    await get(`/admin/workspaces?q=${encodeURIComponent(`Console ${tag}`)}`, staff.cookie)
  ).text();
  expect(found).toContain(`/admin/workspaces/${ws.id}`);
  const detail = await get(`/admin/workspaces/${ws.id}`, staff.cookie);
  expect(detail.status).toBe(200);
  const html = await detail.text();
  expect(html).toContain(`plain-${tag}@example.com`);
  expect(html).toContain('owner');
  expect((await get('/admin/workspaces/not-an-id', staff.cookie)).status).toBe(404);

  // a workspace API key's principal is not a person: left out of the users list, listed under API keys
  const key = await fetch(`${app.url}/rest/v1/rpc/create_api_key`, {
    method: 'POST',
    headers: {
      apikey: app.env.PROJECT_API_KEY!,
      authorization: `Bearer ${plain.session.access_token}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ workspace_id: ws.id, name: 'CI', role: 'member' }),
  });
  expect(key.status).toBe(200);
  const keyId = ((await key.json()) as { id: string }).id;
  expect(await (await get('/admin/users', staff.cookie)).text()).not.toContain(`data-user="${keyId}"`);
  const keys = await (await get('/admin/users?kind=keys', staff.cookie)).text();
  expect(keys).toContain(`data-user="${keyId}"`);
  expect(keys).not.toContain(`data-user="${plain.id}"`);
  const keyPage = await (await get(`/admin/users/${keyId}`, staff.cookie)).text();
  expect(keyPage).toContain('Workspace API key');
  expect(keyPage).not.toContain('Delete account');
  // nor banned or deleted from the console, even asked directly: its workspace revokes it
  const operator = {
    userId: staff.id,
    sessionId: claimsOf(staff.token).session_id,
    context: { ip: null, userAgent: null },
  };
  await expect(deleteUser(pool, operator, keyId)).rejects.toThrow('workspace API key');
  await expect(banUser(pool, operator, keyId, new Date(Date.now() + 3_600_000))).rejects.toThrow(
    'workspace API key',
  );
  expect((await pool.query('select 1 from internal.api_keys where id = $1', [keyId])).rowCount).toBe(1);
  // billing: a payment event the webhook could not apply shows with its status and error
  await pool.query(
    `insert into internal.billing_events (id, type, created, payload, status, last_error)
     values ($1, 'customer.subscription.updated', 1, '{}', 'failed', 'no such workspace')`,
    [`evt_console_${tag}`],
  );
  const billing = await get('/admin/billing', staff.cookie);
  expect(billing.status).toBe(200);
  const billingHtml = await billing.text();
  expect(billingHtml).toContain(`data-event="evt_console_${tag}"`);
  expect(billingHtml).toContain('no such workspace');

  // the log across workspaces, narrowed to this one and to an action, and by date
  const inWorkspace = await (await get(`/admin/audit?workspace=${ws.id}`, staff.cookie)).text();
  expect(inWorkspace).toContain('data-action="member.added"');
  expect(inWorkspace).not.toContain('data-action="login"');
  const byAction = await (
    await get(`/admin/audit?workspace=${ws.id}&action=audit.exported`, staff.cookie)
  ).text();
  expect(byAction).not.toContain('data-action="member.added"');
  const past = await (await get(`/admin/audit?workspace=${ws.id}&to=2000-01-01`, staff.cookie)).text();
  expect(past).toContain('No events match');

  // taken off staff: out at once, the very same session
  expect((await staffCommand('remove', `reader-${tag}@example.com`)).out).toContain('is no longer staff');
  expect((await get('/admin/users', staff.cookie)).status).toBe(404);
}, 180_000);

test('staff at aal1 in a browser: the console sends them to the second step and back', async () => {
  const tag = Date.now();
  const email = `stepup-${tag}@example.com`;
  const staff = await staffMember(email);
  const { data } = await client().auth.signInWithPassword({ email, password: PASSWORD });
  const browser = await launchBrowser();
  try {
    const context = await browser.newContext();
    context.setDefaultTimeout(15_000);
    await context.addCookies(
      cookieOf(data.session!)
        .split('; ')
        .map((c) => ({ name: c.slice(0, c.indexOf('=')), value: c.slice(c.indexOf('=') + 1), url: app.url })),
    );
    const page = await context.newPage();
    await page.goto(`${app.url}/admin/mail`);
    await page.waitForURL('**/sign-in/two-step**');
    // the code of the next step (the one of this step was spent on enrolment)
    const used = await pool.query<{ step: string }>(
      'select last_used_step as step from auth.mfa_factors where user_id = $1',
      [staff.id],
    );
    const step = Number(used.rows[0]!.step) + 1;
    const code = new TOTP({
      secret: Secret.fromBase32(staff.secret),
      digits: 6,
      period: 30,
      algorithm: 'SHA1',
    }).generate({
      timestamp: step * 30_000,
    });
    await page.fill('input[name=code]', code);
    await page.click('button:has-text("Continue")');
    await page.waitForURL(/\/admin\/mail$/);
    await page.getByRole('heading', { name: 'Mail', level: 1 }).waitFor();
  } finally {
    await browser.close();
  }
}, 120_000);
