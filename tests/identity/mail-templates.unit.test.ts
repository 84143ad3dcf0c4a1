// The identity e-mails' templates: every kind has a subject, a plain-text and an HTML part with
// the product name; user-supplied values are escaped in HTML and cannot break the subject line;
// files in MAIL_TEMPLATES_DIR replace the built-ins, and a bad one stops the start naming it.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/server/config.js';
import {
  AUTH_MAIL_KINDS,
  BUILT_IN_TEMPLATES,
  checkTemplate,
  describeDuration,
  loadAuthMailTemplates,
  renderAuthMail,
  type TemplateVariables,
} from '../../src/server/identity/mail-templates.js';

const hostile = '"><script>alert(1)</script>@evil.test';

const variables: TemplateVariables = {
  ProductName: 'Rocket & Co',
  SiteURL: 'https://app.example.com',
  Email: `ada+${hostile}`,
  NewEmail: `new<b>@example.com`,
  ConfirmationURL: 'https://app.example.com/auth/v1/verify?token=abc&type=signup&redirect_to=x',
  Token: '012345',
  TokenHash: 'abc',
  ValidFor: '1 hour',
  Data: { name: `O'Brien <img src=x onerror=alert(1)>`, plan: { tier: 'pro' } },
};

describe('built-in templates', () => {
  test.each(AUTH_MAIL_KINDS)('%s: valid, with the product name in every part', (kind) => {
    const set = BUILT_IN_TEMPLATES[kind];
    for (const part of [set.subject, set.text, set.html]) expect(() => checkTemplate(part)).not.toThrow();
    const mail = renderAuthMail(BUILT_IN_TEMPLATES, kind, variables);
    expect(mail.subject).toContain('Rocket & Co');
    expect(mail.text).toContain('Rocket & Co');
    expect(mail.html).toContain('Rocket &amp; Co');
    expect(mail.text).toContain('012345');
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).not.toContain('{{');
    expect(mail.text).not.toContain('{{');
  });

  test('links and codes are in both parts; the HTML link is escaped, the text one is not', () => {
    const mail = renderAuthMail(BUILT_IN_TEMPLATES, 'confirmation', variables);
    expect(mail.text).toContain(variables.ConfirmationURL);
    expect(mail.html).toContain(
      'href="https://app.example.com/auth/v1/verify?token=abc&amp;type=signup&amp;redirect_to=x"',
    );
    expect(mail.html).toContain('ada+&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;@evil.test');
  });
});

test('every substituted value is escaped in HTML, including metadata; subjects stay one line', () => {
  const templates = structuredClone(BUILT_IN_TEMPLATES);
  templates.confirmation = {
    subject: 'Hello {{ .Data.name }} {{.Email}}',
    text: 'Hi {{ .Data.name }} ({{ .Data.plan }}), {{ .Data.missing }}end',
    html: '<p title="{{ .Data.name }}">{{ .NewEmail }} {{ .Email }}</p>',
  };
  const mail = renderAuthMail(templates, 'confirmation', {
    ...variables,
    Data: { name: 'Eve\r\nBcc: victim@example.com' },
    Email: 'a@b.test\nX-Injected: 1',
  });
  expect(mail.subject).toBe('Hello Eve Bcc: victim@example.com a@b.test X-Injected: 1');
  expect(mail.subject).not.toMatch(/[\r\n]/);
  const rendered = renderAuthMail(templates, 'confirmation', variables);
  expect(rendered.text).toBe(`Hi O'Brien <img src=x onerror=alert(1)> ({"tier":"pro"}), end`);
  expect(rendered.html).toBe(
    '<p title="O&#39;Brien &lt;img src=x onerror=alert(1)&gt;">new&lt;b&gt;@example.com ' +
      'ada+&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;@evil.test</p>',
  );
});

describe('MAIL_TEMPLATES_DIR', () => {
  test('files replace the parts they name; the rest stays built in', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mail-templates-'));
    writeFileSync(path.join(dir, 'confirmation.subject.txt'), 'Welcome to {{ .ProductName }}!\n');
    writeFileSync(path.join(dir, 'confirmation.html'), '<a href="{{ .ConfirmationURL }}">Go</a>');
    writeFileSync(path.join(dir, 'recovery.txt'), 'Reset: {{ .ConfirmationURL }} or {{ .Token }}');
    const templates = loadAuthMailTemplates(dir);
    expect(templates.confirmation.subject).toBe('Welcome to {{ .ProductName }}!');
    expect(templates.confirmation.text).toBe(BUILT_IN_TEMPLATES.confirmation.text);
    expect(templates.recovery.text).toBe('Reset: {{ .ConfirmationURL }} or {{ .Token }}');
    expect(templates.recovery.html).toBe(BUILT_IN_TEMPLATES.recovery.html);
    expect(renderAuthMail(templates, 'confirmation', variables).html).toBe(
      '<a href="https://app.example.com/auth/v1/verify?token=abc&amp;type=signup&amp;redirect_to=x">Go</a>',
    );
  });

  test('an unknown variable or unsupported syntax stops the start, naming the file', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mail-templates-'));
    writeFileSync(path.join(dir, 'invite.txt'), 'Join via {{ .InviteLink }}');
    expect(() => loadAuthMailTemplates(dir)).toThrow(
      /invite\.txt: \{\{ \.InviteLink \}\} is not a known variable/,
    );
    await expect(
      loadConfig({ DATA_DIR: mkdtempSync(path.join(tmpdir(), 'cfg-')), MAIL_TEMPLATES_DIR: dir }),
    ).rejects.toThrow(/MAIL_TEMPLATES_DIR: .*invite\.txt/);

    const other = mkdtempSync(path.join(tmpdir(), 'mail-templates-'));
    writeFileSync(path.join(other, 'magic_link.html'), '{{ if .Token }}{{ .Token }}{{ end }}');
    expect(() => loadAuthMailTemplates(other)).toThrow(/only substitutions/);
    expect(() => loadAuthMailTemplates(path.join(other, 'missing'))).toThrow(/does not exist/);
  });
});

test('durations in words', () => {
  expect(describeDuration(3600)).toBe('1 hour');
  expect(describeDuration(7200)).toBe('2 hours');
  expect(describeDuration(600)).toBe('10 minutes');
  expect(describeDuration(90)).toBe('90 seconds');
});
