// Digest runs end to end: the trigger endpoint's statuses, who is eligible, exactly one digest per
// user and period (twice, concurrently from two instances, after a crash), delivery over real
// SMTP with the right content, and one-click unsubscribe.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { withService } from '../../src/server/db/transactions.js';
import { runDigest } from '../../src/server/digest/run.js';
import { createUnsubscribeKey } from '../../src/server/digest/unsubscribe-token.js';
import { createLogger } from '../../src/server/logger.js';
import { MailDelivery } from '../../src/server/mail/delivery.js';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { asUser, createUser, rpc, type TestUser } from '../support/tenancy.js';

let a: TestServer;
let b: TestServer;
let smtp: TestSmtp;

beforeAll(async () => {
  a = await startTestServer();
  b = await startTestServer({
    DATABASE_URL: a.config.databaseUrl!,
    JWT_SECRET: a.config.jwtSecret,
    PROJECT_API_KEY: a.config.projectApiKey,
    SERVICE_ROLE_KEY: a.config.serviceRoleKey,
    CRON_SECRET: a.config.cronSecret,
  });
  smtp = await startTestSmtp();
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await smtp?.close();
});

const trigger = (server: TestServer, frequency?: string, secret?: string | null, method = 'POST') =>
  call(server, method, `/api/notifications/digest${frequency ? `?frequency=${frequency}` : ''}`, {
    apikey: null,
    headers: secret === null ? {} : { authorization: `Bearer ${secret ?? server.config.cronSecret}` },
  });

async function setPreference(user: TestUser, frequency: string, muted: string[] = []) {
  await a.pool.query(
    'update public.notification_preferences set digest_frequency = $2, muted_workspace_ids = $3 where user_id = $1',
    [user.id, frequency, muted],
  );
}

/** A workspace with an active author and readers; returns the workspace id. */
async function busyWorkspace(author: TestUser, readers: TestUser[], name: string, projects = 3) {
  const ws = await rpc<{ id: string }>(a.pool, author, 'public.create_workspace($1)', [name]);
  await withService(a.pool, async (tx) => {
    for (const r of readers)
      await tx.query(`insert into public.workspace_members values ($1, $2, 'member')`, [ws.id, r.id]);
  });
  await asUser(a.pool, author, async (tx) => {
    for (let i = 0; i < projects; i++) {
      await tx.query('insert into public.projects (workspace_id, name) values ($1, $2)', [
        ws.id,
        `${name} project ${i}`,
      ]);
    }
  });
  return ws.id;
}

beforeEach(async () => {
  smtp.messages.length = 0;
  smtp.refusing = false;
  await a.pool.query('delete from internal.digest_ledger');
  await a.pool.query('delete from internal.outbox');
  await a.pool.query(`update public.notification_preferences set digest_frequency = 'off'`);
});

describe('the trigger endpoint', () => {
  test('401 without or with a wrong secret, 400 for a missing or unknown frequency, 200 otherwise', async () => {
    expect((await trigger(a, 'daily', null)).status).toBe(401);
    const wrong = await trigger(a, 'daily', 'not-the-secret');
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ ok: false, error: 'unauthorized' });
    // a secret with the right prefix is still wrong
    expect((await trigger(a, 'daily', a.config.cronSecret.slice(0, -1))).status).toBe(401);
    expect((await trigger(a, 'daily', `${a.config.cronSecret}x`)).status).toBe(401);
    // the secret is checked before anything else is revealed
    expect((await trigger(a, 'hourly', 'wrong')).status).toBe(401);
    const missing = await trigger(a);
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ ok: false, error: 'invalid_frequency' });
    expect((await trigger(a, 'hourly')).status).toBe(400);
    const ok = await trigger(a, 'weekly');
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ ok: true, frequency: 'weekly', sent: 0 });
    const viaGet = await trigger(a, 'daily', undefined, 'GET');
    expect(viaGet.body).toEqual({ ok: true, frequency: 'daily', sent: 0 });
  });
});

describe('eligibility and content', () => {
  test('the right users get exactly one digest with the right content', async () => {
    const [author, daily, weekly, muted, optedOut, unconfirmed] = await Promise.all(
      ['author', 'daily', 'weekly', 'muted', 'optout', 'unconfirmed'].map((l) => createUser(a.pool, l)),
    );
    await a.pool.query('update auth.users set email_confirmed_at = null where id = $1', [unconfirmed!.id]);
    await a.pool.query(`update public.profiles set display_name = 'Ada Author' where id = $1`, [author!.id]);
    const ws = await busyWorkspace(author!, [daily!, weekly!, muted!, optedOut!, unconfirmed!], 'Rocket Lab');
    await setPreference(author!, 'daily');
    await setPreference(daily!, 'daily');
    await setPreference(weekly!, 'weekly');
    await setPreference(muted!, 'daily', [ws]);
    await setPreference(optedOut!, 'off');
    await setPreference(unconfirmed!, 'daily');
    // Members were added by the test set-up (no actor); keep only the author's own changes.
    await a.pool.query('delete from public.activity_events where workspace_id = $1 and actor_id is null', [
      ws,
    ]);

    const res = await trigger(a, 'daily');
    expect(res.body).toEqual({ ok: true, frequency: 'daily', sent: 1 });
    expect((await trigger(a, 'daily')).body).toMatchObject({ sent: 0 });

    const delivery = new MailDelivery({
      pool: a.pool,
      logger: createLogger('silent'),
      smtp: smtp.url,
      from: 'digest@example.com',
    });
    await delivery.drain();
    await delivery.stop();
    expect(smtp.messages.map((m) => m.to[0])).toEqual([daily!.email]);
    const mail = smtp.messages[0]!;
    // the author's own activity is not news to the author; the member sees it
    expect(mail.header('subject')).toMatch(/^Your daily digest: \d+ updates in 1 workspace$/);
    expect(mail.raw).toContain('Rocket Lab');
    expect(mail.raw).toContain('projects created');
    expect(mail.raw).toContain('Ada Author');
    expect(mail.header('list-unsubscribe')).toMatch(/^<http.*\/api\/notifications\/unsubscribe\?token=/);
    expect(mail.header('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
    expect(mail.raw).toContain('text/html');

    const weeklyRun = await trigger(a, 'weekly');
    expect(weeklyRun.body).toMatchObject({ sent: 1 });
  });

  test('a workspace that requires two-step verification sends its activity only to members with a second factor', async () => {
    const [author, withFactor, withoutFactor] = await Promise.all(
      ['mfa-author', 'mfa-with', 'mfa-without'].map((l) => createUser(a.pool, l)),
    );
    const ws = await busyWorkspace(author!, [withFactor!, withoutFactor!], 'Vault Co');
    await a.pool.query('update public.workspaces set require_mfa = true where id = $1', [ws]);
    await a.pool.query(
      `insert into auth.mfa_factors (user_id, factor_type, status, secret) values ($1, 'totp', 'verified', 'sealed')`,
      [withFactor!.id],
    );
    await setPreference(withFactor!, 'daily');
    await setPreference(withoutFactor!, 'daily');
    await a.pool.query('delete from public.activity_events where workspace_id = $1 and actor_id is null', [
      ws,
    ]);

    expect((await trigger(a, 'daily')).body).toEqual({ ok: true, frequency: 'daily', sent: 1 });
    const sent = await a.pool.query<{ to_address: string }>('select to_address from internal.outbox');
    expect(sent.rows.map((r) => r.to_address)).toEqual([withFactor!.email]);
  });

  test('one-click unsubscribe turns the digest off; forged tokens change nothing', async () => {
    const [author, reader] = [await createUser(a.pool), await createUser(a.pool)];
    await busyWorkspace(author, [reader], 'Unsub Co', 1);
    await setPreference(reader, 'daily');
    await trigger(a, 'daily');
    const row = await a.pool.query<{ headers: Record<string, string> }>(
      'select headers from internal.outbox where to_address = $1',
      [reader.email],
    );
    const link = new URL(row.rows[0]!.headers['List-Unsubscribe']!.slice(1, -1));
    const forged = await fetch(
      `${a.url}/api/notifications/unsubscribe?token=${link.searchParams.get('token')}x`,
      {
        method: 'POST',
      },
    );
    expect(forged.status).toBe(400);
    const page = await fetch(`${a.url}${link.pathname}${link.search}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<form method="post">');
    let pref = await a.pool.query(
      'select digest_frequency from public.notification_preferences where user_id = $1',
      [reader.id],
    );
    expect(pref.rows[0].digest_frequency).toBe('daily'); // a GET changes nothing
    const oneClick = await fetch(`${a.url}${link.pathname}${link.search}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(oneClick.status).toBe(200);
    pref = await a.pool.query(
      'select digest_frequency from public.notification_preferences where user_id = $1',
      [reader.id],
    );
    expect(pref.rows[0].digest_frequency).toBe('off');
  });

  test('only activity since the last digest (at most one period back) counts', async () => {
    const [author, reader] = [await createUser(a.pool), await createUser(a.pool)];
    const ws = await busyWorkspace(author, [reader], 'Old News', 2);
    await setPreference(reader, 'daily');
    await a.pool.query(
      `update public.activity_events set created_at = now() - interval '3 days' where workspace_id = $1`,
      [ws],
    );
    expect((await trigger(a, 'daily')).body).toMatchObject({ sent: 0 });
  });
});

describe('exactly once under faults', () => {
  async function population(n: number) {
    const author = await createUser(a.pool, 'crowd-author');
    const readers: TestUser[] = [];
    for (let i = 0; i < n; i++) readers.push(await createUser(a.pool, 'crowd'));
    await busyWorkspace(author, readers, `Crowd ${Date.now()}`, 2);
    await a.pool.query(
      `update public.notification_preferences set digest_frequency = 'daily' where user_id = any($1)`,
      [readers.map((r) => r.id)],
    );
    return readers;
  }

  test('two instances triggered at once send one digest per user', async () => {
    const readers = await population(40);
    const [first, second] = await Promise.all([trigger(a, 'daily'), trigger(b, 'daily')]);
    expect((first.body.sent as number) + (second.body.sent as number)).toBe(readers.length);
    const outbox = await a.pool.query('select to_address from internal.outbox');
    expect(new Set(outbox.rows.map((r) => r.to_address)).size).toBe(readers.length);
    expect(outbox.rowCount).toBe(readers.length);
  });

  test('a run killed midway and run again completes without duplicates', async () => {
    const readers = await population(30);
    const deps = {
      pool: a.pool,
      appUrl: a.config.appUrl,
      unsubscribeKey: createUnsubscribeKey(a.config.jwtSecret),
    };
    await expect(
      runDigest(deps, 'daily', {
        batchSize: 7,
        onProgress: ({ scanned }) => {
          if (scanned >= 14) throw new Error('killed');
        },
      }),
    ).rejects.toThrow('killed');
    const partial = Number((await a.pool.query('select count(*) from internal.outbox')).rows[0].count);
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(readers.length);
    const rerun = await runDigest(deps, 'daily', { batchSize: 7 });
    expect(rerun.sent).toBe(readers.length - partial);
    const outbox = await a.pool.query('select to_address from internal.outbox');
    expect(outbox.rowCount).toBe(readers.length);
    expect(new Set(outbox.rows.map((r) => r.to_address)).size).toBe(readers.length);
  });

  test('SMTP refusing then recovering: each user still gets exactly one e-mail', async () => {
    const readers = await population(12);
    await trigger(a, 'daily');
    const delivery = new MailDelivery({
      pool: a.pool,
      logger: createLogger('silent'),
      smtp: smtp.url,
      from: 'digest@example.com',
      baseBackoffSeconds: 1,
    });
    smtp.refusing = true;
    expect((await delivery.deliverBatch()).retried).toBe(readers.length);
    smtp.refusing = false;
    await a.pool.query('update internal.outbox set available_at = now()');
    await delivery.drain();
    await delivery.stop();
    const recipients = smtp.messages.map((m) => m.to[0]);
    expect(recipients).toHaveLength(readers.length);
    expect(new Set(recipients).size).toBe(readers.length);
  });
});
