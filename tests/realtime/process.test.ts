// Realtime in the whole process as `npm start` runs it (main.ts): supabase-js's channel() reaches
// it on the server's one port, and a SIGTERM closes every realtime socket (1001) and lets the
// process exit promptly, although the HTTP server no longer counts upgraded sockets as its own.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startApp, type AppProcess } from '../support/app-process.js';
import type { TestServer } from '../support/server.js';
import { RawSocket, realtimeClient, sleep, subscribe } from './support.js';

let app: AppProcess;
/** What the helpers need of a server: its URL and keys. */
let target: TestServer;

beforeAll(async () => {
  // The pages are not what this is about: the process serves the APIs alone.
  app = await startApp({ SKIP_WEB: '1' });
  target = {
    url: app.url,
    config: { projectApiKey: app.env.PROJECT_API_KEY!, serviceRoleKey: app.env.SERVICE_ROLE_KEY! },
  } as unknown as TestServer;
}, 120_000);
afterAll(async () => app?.stop());

test('channel() works against the process, and SIGTERM closes its sockets and stops it', async () => {
  const a = realtimeClient(target).channel('process-room');
  const b = realtimeClient(target).channel('process-room');
  const received: unknown[] = [];
  b.on('broadcast', { event: 'hello' }, (message) => received.push(message.payload));
  expect((await subscribe(a)).status).toBe('SUBSCRIBED');
  expect((await subscribe(b)).status).toBe('SUBSCRIBED');
  await a.send({ type: 'broadcast', event: 'hello', payload: { from: 'a' } });
  await sleep(300);
  expect(received).toEqual([{ from: 'a' }]);

  const raw = await RawSocket.open(target, `apikey=${app.env.PROJECT_API_KEY!}&vsn=2.0.0`);
  const started = Date.now();
  await app.stop();
  const stoppedMs = Date.now() - started;
  await raw.until((s) => s.closed !== null);
  expect(raw.closed).toEqual({ code: 1001, reason: 'server shutting down' });
  // Far below the drain's grace period, which is what open upgraded sockets used to cost.
  expect(stoppedMs).toBeLessThan(5000);
  a.unsubscribe();
  b.unsubscribe();
});
