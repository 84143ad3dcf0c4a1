// Digest wording: every person is named one way throughout a digest (display name, else e-mail
// address, the reader as "you"), whether they did something or something was done to them or
// for them (an invitation to their address), and counts read in words with the plural right.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { countPhrase, describeItem, plural } from '../../src/server/digest/compose.js';
import { runDigest } from '../../src/server/digest/run.js';
import { createUnsubscribeKey } from '../../src/server/digest/unsubscribe-token.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { asUser, createUser, rpc } from '../support/tenancy.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

test('one name per person in a digest: display name, else e-mail, and "you" for the reader', async () => {
  const pool = server.pool;
  const [owner, grace, alan, reader] = await Promise.all(
    ['owner', 'grace', 'alan', 'reader'].map((l) => createUser(pool, `naming-${l}`)),
  );
  await pool.query(`update public.profiles set display_name = 'Olive Owner' where id = $1`, [owner!.id]);
  await pool.query(`update public.profiles set display_name = 'Grace Hopper' where id = $1`, [grace!.id]);
  // Alan has no display name (blank counts as none): he is named by his e-mail address everywhere.
  await pool.query(`update public.profiles set display_name = '  ' where id = $1`, [alan!.id]);
  const ws = await rpc<{ id: string }>(pool, owner!, 'public.create_workspace($1)', ['Naming Lab']);
  // Grace, Alan and the reader are invited by address and accept; Grace's and the reader's roles change.
  for (const invitee of [grace!, alan!, reader!]) {
    const { token } = await rpc<{ token: string }>(pool, owner!, 'public.invite_member($1, $2, $3)', [
      ws.id,
      invitee.email,
      'member',
    ]);
    await rpc(pool, invitee, 'public.accept_invitation($1)', [token]);
  }
  await rpc(pool, owner!, 'public.update_member_role($1, $2, $3)', [ws.id, grace!.id, 'admin']);
  await rpc(pool, owner!, 'public.update_member_role($1, $2, $3)', [ws.id, reader!.id, 'viewer']);
  await asUser(pool, alan!, (tx) =>
    tx.query('insert into public.projects (workspace_id, name) values ($1, $2)', [ws.id, 'Solo']),
  );
  await pool.query(
    `update public.notification_preferences set digest_frequency = case when user_id = $1 then 'daily' else 'off' end`,
    [reader!.id],
  );

  const result = await runDigest(
    {
      pool,
      appUrl: 'https://app.example.com',
      unsubscribeKey: createUnsubscribeKey('x'.repeat(40)),
      productName: 'Acme',
    },
    'daily',
    { latestPerWorkspace: 20 },
  );
  expect(result.sent).toBe(1);
  const { rows } = await pool.query<{ text_body: string; html_body: string }>(
    `select text_body, html_body from internal.outbox where kind = 'digest' and to_address = $1`,
    [reader!.email],
  );
  const text = rows[0]!.text_body;
  expect(text).toContain('Olive Owner invited Grace Hopper as a member');
  expect(text).toContain('Grace Hopper accepted the invitation and joined as a member');
  expect(text).toContain('Grace Hopper accepted the invitation');
  expect(text).toContain('Olive Owner changed Grace Hopper’s role from member to admin');
  expect(text).toContain('Olive Owner changed your role from member to viewer');
  expect(text).toContain(`Olive Owner invited ${alan!.email} as a member`);
  expect(text).toContain(`${alan!.email} accepted the invitation and joined as a member`);
  expect(text).toContain(`${alan!.email} created the project Solo`);
  // Grace is never named by her address, nor anyone by a blank name.
  expect(text).not.toContain(grace!.email);
  expect(text).not.toMatch(/(^|\s) (created|added|changed)/m);
  // Counts in words: one of a kind singular, several plural; never "1 ... s" or "×".
  expect(text).toContain('1 project created');
  expect(text).toContain('1 member joined');
  expect(text).toContain('2 invitations accepted');
  expect(text).toContain('2 roles changed');
  expect(text).not.toContain('×');
  expect(rows[0]!.html_body).toContain('Olive Owner changed Grace Hopper’s role from member to admin');
  expect(rows[0]!.html_body).toContain('Acme');
});

test('plurals: one and several, for every kind a digest counts', () => {
  expect(plural(1, 'update')).toBe('1 update');
  expect(plural(2, 'update')).toBe('2 updates');
  expect(plural(0, 'workspace')).toBe('0 workspaces');
  expect(plural(1200, 'update')).toBe('1,200 updates');
  expect(countPhrase('workspace.updated', 1)).toBe('1 settings change');
  expect(countPhrase('workspace.updated', 4)).toBe('4 settings changes');
  expect(countPhrase('invitation.resent', 2)).toBe('2 invitations sent again');
  expect(countPhrase('invoice.paid', 1)).toBe('1 change: invoice paid');
  expect(countPhrase('invoice.paid', 3)).toBe('3 changes: invoice paid');
  expect(describeItem({ action: 'member.left', subject: null, actor: null, at: '' })).toBe(
    'A former member left the workspace',
  );
});
