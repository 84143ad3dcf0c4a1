// The development mailbox page, rendered as the server renders it: local mode lists the outbox
// with clickable links; production mode answers not found.
import { renderToStaticMarkup } from 'react-dom/server';
import { afterAll, beforeAll, expect, test } from 'vitest';
import MailboxPage from '../../src/app/dev/mailbox/page.js';
import { enqueueMail } from '../../src/server/mail/outbox.js';
import { registerRuntime } from '../../src/server/runtime.js';
import { startTestServer, type TestServer } from '../support/server.js';

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

test('local mode lists the outbox, escaping content and linking URLs', async () => {
  registerRuntime({ config: { ...server.config, mode: 'local' }, pool: server.pool });
  const html = renderToStaticMarkup(await MailboxPage());
  expect(html).toContain('Development mailbox');
  expect(html).toContain('Join Acme &lt;Rockets&gt;');
  expect(html).toContain('To grace@example.com');
  expect(html).toContain('<a href="https://app.example.com/invite?token=abc">');
});

test('production mode: the page does not exist', async () => {
  registerRuntime({ config: { ...server.config, mode: 'production' }, pool: server.pool });
  await expect(MailboxPage()).rejects.toThrow(/NEXT_HTTP_ERROR_FALLBACK;404|NEXT_NOT_FOUND/);
});
