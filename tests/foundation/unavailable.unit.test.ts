// Which errors mean "the database is unreachable right now" (answered 503 with Retry-After), and
// which are bugs (500): a connection refused over TCP or a Unix socket whose file is gone while the
// server is down are the first; a missing file anywhere else is the second.
import { connect } from 'node:net';
import { readFile } from 'node:fs/promises';
import { expect, test } from 'vitest';
import { isDatabaseUnavailable } from '../../src/server/http/unavailable.js';

const connectError = (options: { path: string } | { port: number; host: string }) =>
  new Promise<Error>((resolve) => {
    const socket = connect(options as never);
    socket.on('error', resolve);
  });

test('a Unix socket that is not there, and a refused TCP port, are an unreachable database', async () => {
  const socket = await connectError({ path: '/nonexistent-folder/.s.PGSQL.5432' });
  expect((socket as NodeJS.ErrnoException).code).toBe('ENOENT');
  expect(isDatabaseUnavailable(socket)).toBe(true);
  const refused = await connectError({ port: 1, host: '127.0.0.1' });
  expect(isDatabaseUnavailable(refused)).toBe(true);
  expect(isDatabaseUnavailable({ code: '57P01', message: 'terminating connection' })).toBe(true);
});

test('a missing file that is not a socket, and other errors, are not', async () => {
  const missing = await readFile('/nonexistent-folder/template.html').catch((error: Error) => error);
  expect((missing as NodeJS.ErrnoException).code).toBe('ENOENT');
  expect(isDatabaseUnavailable(missing)).toBe(false);
  expect(isDatabaseUnavailable(new TypeError('x is not a function'))).toBe(false);
  expect(isDatabaseUnavailable({ code: '23505', message: 'duplicate key' })).toBe(false);
  expect(isDatabaseUnavailable(null)).toBe(false);
});
