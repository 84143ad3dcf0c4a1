// Invitation e-mails are written to the outbox in the invitation's own transaction, whoever
// invites: the link carries the one raw token, a resend mails the new token, a refused
// invitation mails nothing.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createPool, type Pool } from '../../src/server/db/pool.js';
import { syncAppSettings } from '../../src/server/settings.js';
import { createTestDatabase } from '../support/server.js';
import { createUser, rpc } from '../support/tenancy.js';

let pool: Pool;
beforeAll(async () => {
  pool = createPool(await createTestDatabase(), { max: 4 });
  await syncAppSettings(pool, { appUrl: 'https://app.example.com' });
});
afterAll(async () => pool?.end());

const mailsTo = async (email: string) =>
  (
    await pool.query<{ subject: string; text_body: string }>(
      `select subject, text_body from internal.outbox where kind = 'invitation' and to_address = $1 order by id`,
      [email],
    )
  ).rows;

test('invite, resend and refusal', async () => {
  const owner = await createUser(pool, 'inviter');
  await pool.query(`update public.profiles set display_name = 'Ada' where id = $1`, [owner.id]);
  const ws = await rpc<{ id: string }>(pool, owner, 'public.create_workspace($1)', ['Rocket <Lab>']);
  const invited = await rpc<{ token: string; invitation_id: string }>(
    pool,
    owner,
    'public.invite_member($1, $2, $3)',
    [ws.id, 'grace@example.com', 'admin'],
  );
  let mails = await mailsTo('grace@example.com');
  expect(mails).toHaveLength(1);
  expect(mails[0]!.subject).toBe('Ada invited you to Rocket <Lab>');
  expect(mails[0]!.text_body).toContain(`https://app.example.com/invitations/accept?token=${invited.token}`);
  expect(mails[0]!.text_body).toContain('as admin');

  const resent = await rpc<{ token: string }>(pool, owner, 'public.resend_invitation($1)', [
    invited.invitation_id,
  ]);
  mails = await mailsTo('grace@example.com');
  expect(mails).toHaveLength(2);
  expect(mails[1]!.text_body).toContain(`token=${resent.token}`);
  expect(mails[1]!.text_body).not.toContain(invited.token);

  await expect(
    rpc(pool, owner, 'public.invite_member($1, $2, $3)', [ws.id, 'grace@example.com', 'member']),
  ).rejects.toMatchObject({
    code: '23505',
  });
  expect(await mailsTo('grace@example.com')).toHaveLength(2);
});
