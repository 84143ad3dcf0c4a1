// Who is connected, as pages and server actions learn it: the client address follows the APIs'
// rule (X-Forwarded-For only with TRUST_PROXY, and only a well-formed IP), and the stamp the
// server puts on web requests cannot be forged or carried in from outside.
import type { IncomingMessage } from 'node:http';
import { describe, expect, test } from 'vitest';
import { clientAddress, ipAddress } from '../../src/server/http/client-address.js';
import {
  CLIENT_ADDRESS_HEADER,
  isLoopback,
  readClientStamp,
  stampClientAddress,
} from '../../src/server/web-session/client-address.js';

function request(remoteAddress: string, headers: Record<string, string> = {}): IncomingMessage {
  return { socket: { remoteAddress }, headers: { ...headers } } as unknown as IncomingMessage;
}

describe('clientAddress (the APIs and the web app alike)', () => {
  const forwarded = (value: string) => new Headers({ 'x-forwarded-for': value });

  test('without TRUST_PROXY the socket address wins', () => {
    expect(clientAddress(forwarded('203.0.113.7'), request('192.0.2.10'), false)).toBe('192.0.2.10');
  });

  test('with TRUST_PROXY the first forwarded address is taken', () => {
    expect(clientAddress(forwarded('203.0.113.7, 10.0.0.1'), request('10.0.0.1'), true)).toBe('203.0.113.7');
    expect(clientAddress(forwarded(' 2001:db8::7 '), request('10.0.0.1'), true)).toBe('2001:db8::7');
  });

  test.each([
    'not-an-ip',
    "1.2.3.4'; drop table x; --",
    'fe80::1%eth0',
    '1.2.3.4:80',
    '',
    '999.1.1.1',
    'x'.repeat(500),
  ])('with TRUST_PROXY a forwarded value that is not an IP (%j) falls back to the socket', (value) => {
    expect(clientAddress(forwarded(value), request('10.0.0.1'), true)).toBe('10.0.0.1');
  });

  test('IPv4-mapped IPv6 socket addresses are unwrapped', () => {
    expect(clientAddress(new Headers(), request('::ffff:192.0.2.10'), false)).toBe('192.0.2.10');
    expect(ipAddress('::FFFF:127.0.0.1')).toBe('127.0.0.1');
  });
});

describe('the stamp on web requests', () => {
  test('replaces whatever the client claimed, by the APIs rule', () => {
    const req = request('192.0.2.10', {
      'x-forwarded-for': '203.0.113.7',
      [CLIENT_ADDRESS_HEADER]: 'AAAA 127.0.0.1 127.0.0.1',
    });
    expect(stampClientAddress(req, false)).toEqual({ client: '192.0.2.10', socket: '192.0.2.10' });
    const stamp = req.headers[CLIENT_ADDRESS_HEADER] as string;
    expect(stamp).not.toContain('AAAA');
    expect(readClientStamp(stamp)).toEqual({ client: '192.0.2.10', socket: '192.0.2.10' });

    const proxied = request('10.0.0.1', { 'x-forwarded-for': '203.0.113.7' });
    expect(stampClientAddress(proxied, true)).toEqual({ client: '203.0.113.7', socket: '10.0.0.1' });
  });

  test('a genuine stamp is kept only when the process forwards to itself over loopback', () => {
    const original = request('203.0.113.9');
    stampClientAddress(original, false);
    const stamp = original.headers[CLIENT_ADDRESS_HEADER] as string;

    const selfForward = request('127.0.0.1', { [CLIENT_ADDRESS_HEADER]: stamp });
    expect(stampClientAddress(selfForward, false)).toEqual({ client: '203.0.113.9', socket: '203.0.113.9' });

    // The same stamp replayed from elsewhere is overwritten with the truth.
    const replayed = request('198.51.100.4', { [CLIENT_ADDRESS_HEADER]: stamp });
    expect(stampClientAddress(replayed, false)).toEqual({ client: '198.51.100.4', socket: '198.51.100.4' });
  });

  test.each([
    null,
    '',
    '127.0.0.1',
    'AAAA 127.0.0.1 127.0.0.1',
    `${'A'.repeat(43)} 127.0.0.1 127.0.0.1`,
    'a b c d',
  ])('a stamp this process did not make reads as nothing: %j', (value) => {
    expect(readClientStamp(value)).toBeNull();
  });

  test.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['::1', true],
    ['::ffff:127.0.0.1', false],
    ['192.0.2.10', false],
    ['10.0.0.1', false],
    ['0.0.0.0', false],
    ['::', false],
    ['fd00::2', false],
    [null, false],
  ] as const)('isLoopback(%j) is %s', (address, expected) => {
    expect(isLoopback(address)).toBe(expected);
  });
});
