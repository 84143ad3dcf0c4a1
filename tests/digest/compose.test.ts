// The digest e-mail: grouped per workspace with counts and latest items, both parts, escaped
// HTML, and a one-click unsubscribe link whose token cannot be forged.
import { describe, expect, test } from 'vitest';
import { composeDigest } from '../../src/server/digest/compose.js';
import { periodStart } from '../../src/server/digest/frequency.js';
import {
  createUnsubscribeKey,
  unsubscribeToken,
  verifyUnsubscribeToken,
} from '../../src/server/digest/unsubscribe-token.js';

const input = {
  frequency: 'weekly' as const,
  recipientName: 'Ada',
  appUrl: 'https://app.example.com',
  unsubscribeUrl: 'https://app.example.com/api/notifications/unsubscribe?token=abc',
  workspaces: [
    {
      workspaceId: 'w1',
      name: 'Acme <Labs>',
      slug: 'acme',
      total: 3,
      counts: { 'project.created': 2, 'member.added': 1 },
      latest: [
        { action: 'project.created', subject: 'Rocket "X"', actor: 'Grace', at: '2026-11-20T10:00:00Z' },
        { action: 'member.added', subject: null, actor: 'Linus', at: '2026-11-19T10:00:00Z' },
      ],
    },
  ],
};

describe('composeDigest', () => {
  test('subject, grouped counts, latest items and links in the text part', () => {
    const mail = composeDigest(input);
    expect(mail.subject).toBe('Your weekly digest: 3 updates in 1 workspace');
    expect(mail.text).toContain('Hi Ada,');
    expect(mail.text).toContain('Acme <Labs> (3 updates: 2 projects created, 1 member joined)');
    expect(mail.text).toContain('Grace created the project Rocket "X"');
    expect(mail.text).toContain('Open: https://app.example.com/w/acme');
    expect(mail.text).toContain(`Unsubscribe: ${input.unsubscribeUrl}`);
  });

  test('the HTML part escapes user content', () => {
    const mail = composeDigest(input);
    expect(mail.html).toContain('Acme &lt;Labs&gt;');
    expect(mail.html).toContain('Rocket &quot;X&quot;');
    expect(mail.html).not.toContain('<Labs>');
  });

  test('one-click unsubscribe headers', () => {
    const mail = composeDigest(input);
    expect(mail.headers).toEqual({
      'List-Unsubscribe': `<${input.unsubscribeUrl}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
  });
});

describe('unsubscribe tokens', () => {
  const key = createUnsubscribeKey('a-jwt-secret-that-is-long-enough-for-tests');
  const user = '4b8a3c2e-1f0d-4e5a-9b7c-123456789abc';

  test('round trip', () => {
    expect(verifyUnsubscribeToken(key, unsubscribeToken(key, user))).toBe(user);
  });

  test('forged, altered, other-key and malformed tokens are refused', () => {
    const token = unsubscribeToken(key, user);
    const other = createUnsubscribeKey('another-secret-entirely-000000000000000');
    const otherUser = '00000000-0000-4000-8000-000000000000';
    const swapped = `${Buffer.from(otherUser).toString('base64url')}.${token.split('.')[1]}`;
    for (const bad of [
      swapped,
      unsubscribeToken(other, user),
      'garbage',
      '',
      `${token}.x`,
      token.slice(0, -2),
    ]) {
      expect(verifyUnsubscribeToken(key, bad)).toBeNull();
    }
  });
});

describe('periods', () => {
  test('daily periods start at UTC midnight; weekly ones on Monday', () => {
    const sunday = new Date('2026-11-22T15:30:00Z');
    expect(periodStart('daily', sunday).toISOString()).toBe('2026-11-22T00:00:00.000Z');
    expect(periodStart('weekly', sunday).toISOString()).toBe('2026-11-16T00:00:00.000Z');
    expect(periodStart('weekly', new Date('2026-11-23T08:00:00Z')).toISOString()).toBe(
      '2026-11-23T00:00:00.000Z',
    );
  });
});
