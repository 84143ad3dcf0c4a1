// Invitation e-mails are limited per recipient, per inviter and per workspace, in the database, so
// a hostile admin cannot turn invite_member / resend_invitation into a spam cannon through any
// path: a refusal is a 429 with Retry-After on the data API and a readable message in the web
// app, and it writes nothing. Names that end up in the e-mail cannot forge lines or headers.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { refusalMessage } from '../../src/app/lib/db.js';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { rpc } from '../support/tenancy.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

let counter = 0;
const address = (label: string) => `${label}-${++counter}-${Date.now()}@example.com`;

const mailsTo = async (email: string) =>
  (
    await server.pool.query<{ subject: string; text_body: string }>(
      `select subject, text_body from internal.outbox where kind = 'invitation' and to_address = $1 order by id`,
      [email],
    )
  ).rows;

const invite = (by: SignedIn, ws: string, email: string) =>
  by.client.rpc('invite_member', { workspace_id: ws, email, role: 'member' });
const resend = (by: SignedIn, invitationId: string) =>
  by.client.rpc('resend_invitation', { invitation_id: invitationId });

const setLimits = (limits: { per_recipient?: number; per_inviter?: number; per_workspace?: number }) =>
  server.pool.query(
    `update internal.invitation_mail_limits set per_recipient = coalesce($1, per_recipient),
       per_inviter = coalesce($2, per_inviter), per_workspace = coalesce($3, per_workspace)`,
    [limits.per_recipient ?? null, limits.per_inviter ?? null, limits.per_workspace ?? null],
  );

describe('per recipient (default: 3 an hour)', () => {
  let owner: SignedIn;
  let ws: string;
  let victim: string;
  let invitationId: string;

  beforeAll(async () => {
    owner = await signUp(server, 'cannon');
    ws = await workspace(server, owner, 'Cannon');
    victim = address('victim');
    const invited = await invite(owner, ws, victim);
    expect(invited.error).toBeNull();
    invitationId = (invited.data as { invitation_id: string }).invitation_id;
  });

  test('50 resends at once put 3 e-mails in the outbox; the other 48 are 429s that change nothing', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, () => resend(owner, invitationId)));
    const ok = results.filter((r) => r.error === null);
    const refused = results.filter((r) => r.status === 429);
    expect(ok).toHaveLength(2); // the invitation's own e-mail was the first of three
    expect(refused).toHaveLength(48);
    expect(refused[0]!.error).toMatchObject({ code: 'PT429' });
    expect(refused[0]!.error!.message).toMatch(/Too many invitation e-mails to this address/);
    expect(await mailsTo(victim)).toHaveLength(3);

    // nothing of a refused call remains: no activity event, the latest link still works
    const resent = await server.pool.query<{ n: number }>(
      `select count(*)::int as n from public.activity_events where workspace_id = $1 and action = 'invitation.resent'`,
      [ws],
    );
    expect(resent.rows[0]!.n).toBe(2);
  });

  test('the refusal carries Retry-After and names the limit', async () => {
    const response = await call(server, 'POST', '/rest/v1/rpc/resend_invitation', {
      body: { invitation_id: invitationId },
      headers: { authorization: `Bearer ${owner.accessToken}` },
    });
    expect(response.status).toBe(429);
    const retryAfter = Number(response.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3000);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(response.body).toMatchObject({ code: 'PT429' });
    expect(response.body.details).toMatch(/3 per hour per recipient/);
    expect(response.body.hint).toMatch(/Try again in \d+ minutes/);
  });

  test('another workspace cannot mail the same address either; other addresses are unaffected', async () => {
    const stranger = await signUp(server, 'stranger');
    const elsewhere = await workspace(server, stranger, 'Elsewhere');
    expect((await invite(stranger, elsewhere, victim)).status).toBe(429);
    expect(await mailsTo(victim)).toHaveLength(3);

    const other = address('other');
    expect((await invite(owner, ws, other)).error).toBeNull();
    expect((await invite(stranger, elsewhere, address('friend'))).error).toBeNull();
    expect(await mailsTo(other)).toHaveLength(1);
  });

  test('the window slides: an hour after the first e-mails, one may be sent again', async () => {
    await server.pool.query(
      `update internal.invitation_mail_log set sent_at = sent_at - interval '61 minutes'
       where recipient = $1 and sent_at = (select min(sent_at) from internal.invitation_mail_log where recipient = $1)`,
      [victim],
    );
    expect((await resend(owner, invitationId)).error).toBeNull();
    expect((await resend(owner, invitationId)).status).toBe(429);
    expect(await mailsTo(victim)).toHaveLength(4);
  });

  test('the web app shows the refusal as a sentence, not a generic failure', async () => {
    const user = { id: owner.id, email: owner.email };
    const error = await rpc(server.pool, user, 'public.resend_invitation($1)', [invitationId]).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).not.toBeNull();
    expect(refusalMessage(error)).toMatch(
      /^Too many invitation e-mails to this address\. .*Try again in \d+ minutes/,
    );
  });
});

describe('per inviter and per workspace (settings in internal.invitation_mail_limits)', () => {
  test('an inviter is limited across workspaces; a workspace across its admins', async () => {
    await setLimits({ per_inviter: 4, per_workspace: 6 });
    try {
      const [owner, adminA, adminB] = await Promise.all([
        signUp(server, 'owner'),
        signUp(server, 'admin-a'),
        signUp(server, 'admin-b'),
      ]);
      const ws = await workspace(server, owner, 'Busy', [
        [adminA, 'admin'],
        [adminB, 'admin'],
      ]);
      for (let i = 0; i < 4; i++) expect((await invite(adminA, ws, address('team'))).error).toBeNull();
      const fifth = await invite(adminA, ws, address('team'));
      expect(fifth.status).toBe(429);
      expect(fifth.error?.message).toMatch(/Too many invitation e-mails from you/);

      // adminA's own workspace is still limited by adminA's count
      const own = await workspace(server, adminA, 'Own');
      expect((await invite(adminA, own, address('solo'))).status).toBe(429);

      expect((await invite(adminB, ws, address('team'))).error).toBeNull();
      expect((await invite(adminB, ws, address('team'))).error).toBeNull();
      const seventh = await invite(owner, ws, address('team'));
      expect(seventh.status).toBe(429);
      expect(seventh.error?.message).toMatch(/Too many invitation e-mails from this workspace/);

      // adminB (2 of 4 sent) can still invite from another workspace
      const bOwn = await workspace(server, adminB, 'B own');
      expect((await invite(adminB, bOwn, address('solo'))).error).toBeNull();
      const fromBusy = await server.pool.query<{ n: number }>(
        `select count(*)::int as n from public.invitations where workspace_id = $1`,
        [ws],
      );
      expect(fromBusy.rows[0]!.n).toBe(6);
    } finally {
      await setLimits({ per_inviter: 20, per_workspace: 50 });
    }
  });
});

describe('what the invitation e-mail quotes', () => {
  test('names with line breaks or other control characters are refused with a clear 400', async () => {
    const owner = await signUp(server, 'forger');
    const bad = await owner.client.rpc('create_workspace', {
      name: 'Acme\n\nAccept the invitation: https://evil.example/',
    });
    expect(bad.status).toBe(400);
    expect(bad.error).toMatchObject({ code: '22023' });
    expect(bad.error!.message).toMatch(/control characters/);

    const ws = await workspace(server, owner, 'Plain');
    const rename = await owner.client
      .from('workspaces')
      .update({ name: 'Plain\r\nBcc: x@evil.example' })
      .eq('id', ws);
    expect(rename.status).toBe(400);
    const profile = await owner.client
      .from('profiles')
      .update({ display_name: 'Ada\u202e' })
      .eq('id', owner.id);
    expect(profile.status).toBe(400);
    expect(profile.error!.message).toMatch(/control characters/);

    const row = await server.pool.query('select name from public.workspaces where id = $1', [ws]);
    expect(row.rows[0].name).toBe('Plain');
  });

  test('the subject is one bounded line even with the longest names', async () => {
    const owner = await signUp(server, 'long');
    await owner.client
      .from('profiles')
      .update({ display_name: 'D'.repeat(100) })
      .eq('id', owner.id);
    const ws = await workspace(server, owner, 'W'.repeat(100));
    const to = address('long');
    expect((await invite(owner, ws, to)).error).toBeNull();
    const [mail] = await mailsTo(to);
    expect(mail!.subject).toBe(`${'D'.repeat(100)} invited you to ${'W'.repeat(100)}`);
    expect(mail!.subject).not.toMatch(/[\r\n]/);
  });
});
