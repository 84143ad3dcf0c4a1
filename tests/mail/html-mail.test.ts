// Every e-mail the service sends, as a customer's mail client receives it over real SMTP: the
// identity e-mails (confirmation, recovery, magic link, e-mail change, reauthentication, an
// invitation by the admin API), the workspace invitation, the activity digest, the
// payment-failed notice and the notices about a request to join. Each has a text part and an HTML part in the product's layout: the
// product's name (PRODUCT_NAME), its logo as an inline attachment named by Content-ID (no remote
// image), the link as a button and as text, the code where the flow has one, lang and
// role=presentation tables. An operator's HTML template in MAIL_TEMPLATES_DIR still wins.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runDigest } from '../../src/server/digest/run.js';
import { createUnsubscribeKey } from '../../src/server/digest/unsubscribe-token.js';
import { createLogger } from '../../src/server/logger.js';
import { MailDelivery } from '../../src/server/mail/delivery.js';
import { logoPng } from '../../src/server/mail/logo.js';
import { decodeMessage } from '../support/auth-mail.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startTestSmtp, type ReceivedMail, type TestSmtp } from '../support/smtp.js';
import { checkoutCompleted, deliverEvent, envelope, invoiceObject } from '../support/stripe-events.js';
import { createUser, rpc } from '../support/tenancy.js';

const PRODUCT = 'Acme Cloud';
const SITE = 'https://app.example.com';
const PASSWORD = 'correct horse battery';

let server: TestServer;
let smtp: TestSmtp;
let delivery: MailDelivery;
let templatesDir: string;

beforeAll(async () => {
  server = await startTestServer({
    PRODUCT_NAME: PRODUCT,
    AUTH_AUTOCONFIRM: 'false',
    SITE_URL: SITE,
    RATE_LIMIT_EMAIL_SENT: '1000',
    BILLING_PLANS: JSON.stringify([{ id: 'pro', name: 'Pro', priceId: 'price_pro_monthly' }]),
  });
  smtp = await startTestSmtp();
  delivery = new MailDelivery({
    pool: server.pool,
    logger: createLogger('silent'),
    smtp: smtp.url,
    from: `${PRODUCT} <no-reply@example.com>`,
    brand: { productName: PRODUCT, siteUrl: server.config.appUrl },
  });
  templatesDir = mkdtempSync(path.join(tmpdir(), 'tenantry-mail-templates-'));
});
afterAll(async () => {
  await delivery?.stop();
  await smtp?.close();
  await server?.close();
  rmSync(templatesDir, { recursive: true, force: true });
});

interface Received {
  raw: ReceivedMail;
  subject: string;
  text: string;
  html: string;
}

let counter = 0;
const unique = (label: string) => `${label}-${++counter}-${Date.now()}@example.com`;

/** Delivers the outbox and returns the newest message received for `to` (of `kind`, if given). */
async function received(to: string, smtpServer = smtp, worker = delivery, kind?: string): Promise<Received> {
  await worker.drain();
  // Messages of one batch arrive in any order; the outbox's order is the order they were written.
  const { rows } = await server.pool.query<{ message_id: string }>(
    `select message_id from internal.outbox where to_address = $1 and ($2::text is null or kind = $2) order by id desc limit 1`,
    [to, kind ?? null],
  );
  const raw =
    smtpServer.messages.find((m) => m.header('message-id') === rows[0]?.message_id) ??
    smtpServer.messages.filter((m) => m.to.includes(to)).at(-1);
  if (!raw) throw new Error(`no e-mail for ${to}`);
  return { raw, ...decodeMessage(raw.raw) };
}

/** The base64 body of the inline image part whose Content-ID is <logo@tenantry>. */
function logoAttachment(raw: string): Buffer | null {
  const part = raw
    .split(/\r?\n--/)
    .find(
      (chunk) => /content-id:\s*<logo@tenantry>/i.test(chunk) && /content-type:\s*image\/png/i.test(chunk),
    );
  if (!part) return null;
  const body = part.split(/\r?\n\r?\n/)[1] ?? '';
  return Buffer.from(body.replace(/\s+/g, ''), 'base64');
}

/** What every e-mail's HTML part holds, whatever its kind. */
function expectProductHtml(mail: Received, link: string | null) {
  const { html } = mail;
  expect(html).toMatch(/^<!DOCTYPE html/);
  expect(html).toContain('<html dir="ltr" lang="en">');
  expect(html).toContain('name="color-scheme" content="light dark"');
  expect(html).toContain(PRODUCT);
  expect(html).toMatch(/<img[^>]*alt="Acme Cloud"[^>]*src="cid:logo@tenantry"/);
  expect(html).toContain('role="presentation"');
  // Nothing remote to fetch: no http(s) image, stylesheet or script.
  expect(html).not.toMatch(/<img[^>]*src="https?:/i);
  expect(html).not.toMatch(/<link[^>]*href=/i);
  expect(html).not.toMatch(/<script/i);
  expect(html).not.toMatch(/url\(\s*['"]?https?:/i);
  if (link) {
    const escaped = link.replace(/&/g, '&amp;');
    // the primary button, and the link written out as text for clients that hide buttons
    expect(html).toMatch(new RegExp(`<a[^>]*class="mail-button"[^>]*href="${escapeRegExp(escaped)}"`));
    expect(html).toContain(`>${escaped}</a>`);
  }
  expect(mail.text).toContain(PRODUCT);
  // The logo travels with the message: the attachment is the product's PNG.
  expect(logoAttachment(mail.raw.raw)?.equals(logoPng())).toBe(true);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const verifyLink = (text: string) => /https?:\/\/\S+\/auth\/v1\/verify\?\S+/.exec(text)?.[0] ?? null;
const codeIn = (text: string) => /(?:code: |^)(\d{6})$/m.exec(text)?.[1] ?? null;

/** An identity e-mail: the text's link and code are the HTML's, with the code shown large. */
function expectIdentityMail(mail: Received, withLink: boolean) {
  const link = verifyLink(mail.text);
  const code = codeIn(mail.text);
  expect(code).toMatch(/^\d{6}$/);
  expect(mail.html).toMatch(new RegExp(`class="mail-code"[^>]*>${code}</p>`));
  if (withLink) expect(link).not.toBeNull();
  expectProductHtml(mail, withLink ? link : null);
  return { link, code };
}

async function signedIn() {
  const email = unique('user');
  const { error } = await server
    .adminClient()
    .auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
  expect(error).toBeNull();
  const supabase = server.client();
  expect((await supabase.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
  return { email, supabase };
}

describe('identity e-mails', () => {
  test('confirmation of a sign-up', async () => {
    const email = unique('signup');
    const { error } = await server.client().auth.signUp({ email, password: PASSWORD });
    expect(error).toBeNull();
    const mail = await received(email);
    expect(mail.subject).toBe(`Confirm your e-mail address for ${PRODUCT}`);
    expect(mail.html).toContain('Confirm my e-mail address');
    expectIdentityMail(mail, true);
  });

  test('recovery and magic link', async () => {
    const { email } = await signedIn();
    expect((await server.client().auth.resetPasswordForEmail(email)).error).toBeNull();
    const recovery = await received(email);
    expect(recovery.subject).toBe(`Reset your ${PRODUCT} password`);
    expect(recovery.html).toContain('Choose a new password');
    expectIdentityMail(recovery, true);

    const other = await signedIn();
    const otp = await server
      .client()
      .auth.signInWithOtp({ email: other.email, options: { shouldCreateUser: false } });
    expect(otp.error).toBeNull();
    const magic = await received(other.email);
    expect(magic.subject).toBe(`Your ${PRODUCT} sign-in link`);
    expectIdentityMail(magic, true);
  });

  test('e-mail change and reauthentication', async () => {
    const { email, supabase } = await signedIn();
    const next = unique('changed');
    expect((await supabase.auth.updateUser({ email: next })).error).toBeNull();
    const change = await received(next);
    expect(change.subject).toBe(`Confirm the change of your ${PRODUCT} e-mail address`);
    expect(change.html).toContain(next);
    expectIdentityMail(change, true);

    expect((await supabase.auth.reauthenticate()).error).toBeNull();
    const reauth = await received(email);
    expect(reauth.subject).toBe(`Your ${PRODUCT} verification code`);
    // no link to follow: the code is the whole message, and there is no button
    expect(reauth.html).not.toContain('class="mail-button"');
    expectIdentityMail(reauth, false);
  });

  test('invitation to the project by the admin API', async () => {
    const email = unique('invited');
    const { error } = await server.adminClient().auth.admin.inviteUserByEmail(email);
    expect(error).toBeNull();
    const mail = await received(email);
    expect(mail.subject).toBe(`You have been invited to ${PRODUCT}`);
    expect(mail.html).toContain('Accept the invitation');
    expectIdentityMail(mail, true);
  });

  test('values are escaped in the HTML part', async () => {
    const email = unique('escape');
    const { error } = await server.client().auth.signUp({ email, password: PASSWORD });
    expect(error).toBeNull();
    const mail = await received(email);
    // the verify link's query has an & between parameters, which HTML must escape
    expect(mail.html).toMatch(/href="[^"]*\/auth\/v1\/verify\?[^"]*&amp;[^"]*"/);
    expect(mail.html).not.toMatch(/href="[^"]*\/auth\/v1\/verify\?[^"&]*&[^a]/);
  });
});

describe('product e-mails', () => {
  test('the workspace invitation', async () => {
    const owner = await createUser(server.pool, 'html-owner');
    await server.pool.query(`update public.profiles set display_name = 'Olive <Owner>' where id = $1`, [
      owner.id,
    ]);
    const ws = await rpc<{ id: string }>(server.pool, owner, 'public.create_workspace($1)', ['Rocket & Co']);
    const email = unique('colleague');
    const { token } = await rpc<{ token: string }>(server.pool, owner, 'public.invite_member($1, $2, $3)', [
      ws.id,
      email,
      'admin',
    ]);
    const mail = await received(email);
    const link = /^Accept the invitation: (\S+)$/m.exec(mail.text)?.[1] ?? '';
    expect(link).toMatch(new RegExp(`/invitations/accept\\?token=${token}$`));
    expect(mail.subject).toBe('Olive <Owner> invited you to Rocket & Co');
    expect(mail.text).toContain('as an admin');
    expect(mail.html).toContain('Olive &lt;Owner&gt; invited you to join the workspace “Rocket &amp; Co”');
    expect(mail.html).toContain('Accept the invitation');
    expectProductHtml(mail, link);
  });

  test('the activity digest', async () => {
    const author = await createUser(server.pool, 'html-author');
    const reader = await createUser(server.pool, 'html-reader');
    await server.pool.query(`update public.profiles set display_name = 'Ada Author' where id = $1`, [
      author.id,
    ]);
    const ws = await rpc<{ id: string }>(server.pool, author, 'public.create_workspace($1)', ['Digest Lab']);
    const { token } = await rpc<{ token: string }>(server.pool, author, 'public.invite_member($1, $2, $3)', [
      ws.id,
      reader.email,
      'member',
    ]);
    await rpc(server.pool, reader, 'public.accept_invitation($1)', [token]);
    await server.pool.query(
      `update public.notification_preferences set digest_frequency = case when user_id = $1 then 'daily' else 'off' end`,
      [reader.id],
    );
    const run = await runDigest(
      {
        pool: server.pool,
        appUrl: server.config.appUrl,
        unsubscribeKey: createUnsubscribeKey(server.config.jwtSecret),
        productName: PRODUCT,
      },
      'daily',
    );
    expect(run.sent).toBe(1);
    const mail = await received(reader.email, smtp, delivery, 'digest');
    expect(mail.subject).toMatch(/^Your daily digest: \d+ updates in 1 workspace$/);
    expect(mail.text).toContain('Ada Author created the workspace Digest Lab');
    expect(mail.html).toContain('Ada Author created the workspace Digest Lab');
    expect(mail.html).toMatch(/href="[^"]*\/api\/notifications\/unsubscribe\?token=[^"]+"[^>]*>Unsubscribe</);
    expectProductHtml(mail, null);
  });

  test('the payment-failed notice to owners', async () => {
    const owner = await createUser(server.pool, 'html-payer');
    const ws = await rpc<{ id: string }>(server.pool, owner, 'public.create_workspace($1)', ['Paying Lab']);
    const tag = Math.random().toString(36).slice(2, 10);
    const [customer, subscription] = [`cus_${tag}`, `sub_${tag}`];
    const t = Math.floor(Date.now() / 1000);
    await deliverEvent(
      server,
      envelope('checkout.session.completed', checkoutCompleted(ws.id, customer, subscription), {
        created: t,
      }),
    );
    const failed = await deliverEvent(
      server,
      envelope(
        'invoice.payment_failed',
        invoiceObject({ subscription, customer, workspaceId: ws.id, status: 'open' }),
        {
          created: t + 1,
        },
      ),
    );
    expect(failed.body.outcome).toBe('processed');
    const mail = await received(owner.email);
    expect(mail.subject).toBe('Payment failed for Paying Lab');
    const billing = /^Billing settings: (\S+)$/m.exec(mail.text)?.[1];
    expect(billing).toBeDefined();
    expect(mail.html).toContain('Update the payment method');
    expectProductHtml(mail, billing!);
  });

  test('a request to join, to the owners, and its answer, to the requester', async () => {
    const domain = `joiners-${Date.now()}.com`;
    const withAddress = async (local: string) => {
      const email = `${local}@${domain}`;
      const { rows } = await server.pool.query<{ id: string }>(
        `insert into auth.users (email, email_confirmed_at) values ($1, now()) returning id`,
        [email],
      );
      return { id: rows[0]!.id, email };
    };
    const owner = await withAddress('owner');
    const requester = await withAddress('rita');
    await server.pool.query(`update public.profiles set display_name = 'Rita <R>' where id = $1`, [
      requester.id,
    ]);
    const ws = await rpc<{ id: string }>(server.pool, owner, 'public.create_workspace($1)', ['Joiners & Co']);
    const added = await rpc<{ id: string }>(server.pool, owner, 'public.add_workspace_domain($1, $2)', [
      ws.id,
      domain,
    ]);
    await rpc(server.pool, owner, 'public.set_workspace_domain_policy($1, $2, $3)', [
      added.id,
      'request',
      'member',
    ]);
    const request = await rpc<{ id: string }>(
      server.pool,
      requester,
      'public.request_to_join_workspace($1)',
      [ws.id],
    );

    const notice = await received(owner.email, smtp, delivery, 'join_request_received');
    expect(notice.subject).toBe(`Rita <R> (${requester.email}) asked to join Joiners & Co`);
    const members = /^Approve or deny: (\S+)$/m.exec(notice.text)?.[1];
    expect(members).toMatch(/\/w\/[^/]+\/members$/);
    expect(notice.text).toContain('approved, they join as member');
    expect(notice.html).toContain('Rita &lt;R&gt;');
    expect(notice.html).toContain('A request to join Joiners &amp; Co');
    expectProductHtml(notice, members!);

    await rpc(server.pool, owner, 'public.answer_join_request($1, $2)', [request.id, true]);
    const answer = await received(requester.email, smtp, delivery, 'join_request_answered');
    expect(answer.subject).toBe('You have joined Joiners & Co');
    const open = /^Open the workspace: (\S+)$/m.exec(answer.text)?.[1];
    expect(open).toMatch(/\/w\/[^/]+$/);
    expect(answer.html).toContain('Welcome to Joiners &amp; Co');
    expectProductHtml(answer, open!);
  });
});

test('an HTML template in MAIL_TEMPLATES_DIR wins over the built-in one; the other parts stay', async () => {
  writeFileSync(
    path.join(templatesDir, 'recovery.html'),
    '<p>Operator reset for {{ .Email }}: <a href="{{ .ConfirmationURL }}">go</a> {{ .Token }}</p>',
  );
  const custom = await startTestServer({
    PRODUCT_NAME: PRODUCT,
    SITE_URL: SITE,
    MAIL_TEMPLATES_DIR: templatesDir,
  });
  const customSmtp = await startTestSmtp();
  const worker = new MailDelivery({
    pool: custom.pool,
    logger: createLogger('silent'),
    smtp: customSmtp.url,
    from: 'no-reply@example.com',
    brand: { productName: PRODUCT, siteUrl: custom.config.appUrl },
  });
  try {
    const email = unique('override');
    expect(
      (await custom.adminClient().auth.admin.createUser({ email, password: PASSWORD, email_confirm: true }))
        .error,
    ).toBeNull();
    expect((await custom.client().auth.resetPasswordForEmail(email)).error).toBeNull();
    const mail = await received(email, customSmtp, worker);
    const link = verifyLink(mail.text)!;
    const code = codeIn(mail.text)!;
    expect(mail.html).toBe(
      `<p>Operator reset for ${email}: <a href="${link.replace(/&/g, '&amp;')}">go</a> ${code}</p>`,
    );
    // the built-in subject and text part are kept, and no logo is attached to HTML that does not show it
    expect(mail.subject).toBe(`Reset your ${PRODUCT} password`);
    expect(mail.text).toContain(`Or enter this code: ${code}`);
    expect(logoAttachment(mail.raw.raw)).toBeNull();
  } finally {
    await worker.stop();
    await customSmtp.close();
    await custom.close();
  }
});
