// The development mailbox: its content lists the outbox with clickable links; it is served only
// in local mode and only to a client on this machine, judged by the real connection (and by the
// address a trusted proxy reports), never by a header the client sets; production has no mailbox.
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { mailboxAllowed } from '../../src/app/dev/mailbox/access.js';
import { loadConfig } from '../../src/server/config.js';
import { Mailbox } from '../../src/app/dev/mailbox/mailbox.js';
import MailboxPage from '../../src/app/dev/mailbox/page.js';
import { enqueueMail } from '../../src/server/mail/outbox.js';
import { registerRuntime } from '../../src/server/runtime.js';
import { stampClientAddress } from '../../src/server/web-session/client-address.js';
import { randomKey, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  await enqueueMail(server.pool, {
    kind: 'invitation',
    to: 'grace@example.com',
    subject: 'Join Acme <Rockets>',
    text: 'Accept: https://app.example.com/invite?token=abc\nThanks',
  });
});
afterAll(async () => server?.close());

const brand = { productName: 'Acme', siteUrl: 'https://app.example.com' };

test('the mailbox lists the outbox, escaping content and linking URLs', async () => {
  const html = renderToStaticMarkup(await Mailbox({ pool: server.pool, smtpConfigured: false, brand }));
  expect(html).toContain('Development mailbox');
  expect(html).toContain('Join Acme &lt;Rockets&gt;');
  expect(html).toContain('To grace@example.com');
  expect(html).toMatch(/<a href="https:\/\/app\.example\.com\/invite\?token=abc"[^>]*>/);
});

test('an HTML part is previewed in a sandboxed frame (no scripts) beside its text part, the logo inline', async () => {
  await enqueueMail(server.pool, {
    kind: 'test.html',
    to: 'ada@example.com',
    subject: 'With HTML',
    text: 'The text part: https://app.example.com/x',
    html: '<p>The <b>HTML</b> part</p><img src="cid:logo@tenantry" alt="Acme">',
  });
  const html = renderToStaticMarkup(await Mailbox({ pool: server.pool, smtpConfigured: false, brand }));
  const frame = /<iframe[^>]*title="HTML part of “With HTML”"[^>]*>/.exec(html)?.[0];
  expect(frame).toBeDefined();
  expect(frame).toContain('sandbox=""');
  expect(frame).toContain('srcDoc="&lt;p&gt;The &lt;b&gt;HTML&lt;/b&gt; part');
  expect(frame).toContain('data:image/png;base64,');
  expect(frame).not.toContain('cid:');
  expect(html).toContain('The text part: ');
});

test('production mode: the page does not exist', async () => {
  registerRuntime({ config: { ...server.config, mode: 'production' }, pool: server.pool });
  await expect(MailboxPage()).rejects.toThrow(/NEXT_HTTP_ERROR_FALLBACK;404|NEXT_NOT_FOUND/);
});

test.each([
  ['local, from loopback', 'local', '127.0.0.1', '127.0.0.1', true],
  ['local, from IPv6 loopback', 'local', '::1', '::1', true],
  ['local, from another machine', 'local', '192.0.2.10', '192.0.2.10', false],
  ['local, from a private network', 'local', '10.0.0.7', '10.0.0.7', false],
  ['local, through a local proxy for a remote client', 'local', '203.0.113.5', '127.0.0.1', false],
  ['local, unknown address', 'local', null, null, false],
  ['production, from loopback', 'production', '127.0.0.1', '127.0.0.1', false],
] as const)('%s: allowed is %s', (_name, mode, client, socket, allowed) => {
  expect(mailboxAllowed(mode, { client, socket })).toBe(allowed);
});

/** The connection as the server sees it: a socket address and the headers the client sent. */
function connection(remoteAddress: string, headers: Record<string, string>): IncomingMessage {
  return { socket: { remoteAddress }, headers: { ...headers } } as unknown as IncomingMessage;
}

test('headers cannot make a remote client look local', () => {
  const forged = {
    'x-forwarded-for': '127.0.0.1',
    'x-real-ip': '127.0.0.1',
    forwarded: 'for=127.0.0.1',
    'x-tenantry-client-address': 'AAAA 127.0.0.1 127.0.0.1',
  };
  for (const remote of ['192.0.2.10', '::ffff:198.51.100.3', '2001:db8::1', '10.1.2.3']) {
    for (const trustProxy of [false, true]) {
      expect(mailboxAllowed('local', stampClientAddress(connection(remote, forged), trustProxy))).toBe(false);
    }
  }
  expect(mailboxAllowed('local', stampClientAddress(connection('127.0.0.1', {}), false))).toBe(true);
  expect(mailboxAllowed('local', stampClientAddress(connection('::ffff:127.0.0.1', {}), false))).toBe(true);
});

test('local mode listens on loopback unless HOST says otherwise; production on every address', async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tenantry-config-'));
  try {
    expect((await loadConfig({ DATA_DIR: dataDir })).host).toBe('127.0.0.1');
    expect((await loadConfig({ DATA_DIR: dataDir, HOST: '0.0.0.0' })).host).toBe('0.0.0.0');
    const production = {
      DATABASE_URL: 'postgres://x@localhost/db',
      JWT_SECRET: randomKey(),
      PROJECT_API_KEY: randomKey('anon_'),
      SERVICE_ROLE_KEY: randomKey('service_'),
      PAYMENT_WEBHOOK_SECRET: randomKey('whsec_'),
      CRON_SECRET: randomKey(),
    };
    expect((await loadConfig(production)).host).toBe('0.0.0.0');
    expect((await loadConfig({ ...production, HOST: '10.0.0.5' })).host).toBe('10.0.0.5');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
