// Page requests take fair turns as data-API requests do: one signed-in user keeping four dozen
// page renders in flight runs WEB_CALLER_CONCURRENCY of them at once, so another user's pages are
// answered in a fraction of the time the busy user's own wait, and every request of both is still
// answered. The two users connect from one address: the caller is told by the session cookie, as
// the pages tell who is signed in.
import { Agent, request } from 'node:http';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  sessionCookieName,
  sessionCookies,
  type StoredSession,
} from '../../src/server/web-session/cookies.js';
import { startApp, type AppProcess } from '../support/app-process.js';

const BUSY_IN_FLIGHT = 48;
const DURATION_MS = 6000;

let app: AppProcess;

beforeAll(async () => {
  app = await startApp({ RATE_LIMIT_SIGNIN_PER_ADDRESS: '1000' });
}, 300_000);
afterAll(async () => app?.stop());

/** A confirmed user signed in through the identity API; answers the session cookie header. */
async function signedInCookie(email: string): Promise<string> {
  const service = app.env.SERVICE_ROLE_KEY!;
  const created = await fetch(`${app.url}/auth/v1/admin/users`, {
    method: 'POST',
    headers: { apikey: service, authorization: `Bearer ${service}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse battery', email_confirm: true }),
  });
  expect(created.status).toBe(200);
  const token = await fetch(`${app.url}/auth/v1/token?grant_type=password`, {
    method: 'POST',
    headers: { apikey: app.env.PROJECT_API_KEY!, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse battery' }),
  });
  expect(token.status).toBe(200);
  const session = (await token.json()) as StoredSession;
  return sessionCookies(sessionCookieName(app.url), session, [], false)
    .map((cookie) => `${cookie.name}=${cookie.value}`)
    .join('; ');
}

/** GETs `path` over `agent` (one client address) with `cookie`; answers status and milliseconds. */
function page(agent: Agent, path: string, cookie: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const url = new URL(path, app.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: url.port, path: url.pathname, agent, headers: { cookie, host: url.host } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

test(
  "one user's many page renders in flight do not hold up another user's pages",
  async () => {
    const busyCookie = await signedInCookie('busy-pages@example.com');
    const otherCookie = await signedInCookie('other-pages@example.com');
    const busyAgent = new Agent({ keepAlive: true, maxSockets: BUSY_IN_FLIGHT, localAddress: '127.0.0.7' });
    // The same address for both: only the session cookie tells them apart.
    const otherAgent = new Agent({ keepAlive: true, maxSockets: 1, localAddress: '127.0.0.7' });
    // Both pages render once before the clock starts (the first render of a route compiles nothing
    // in a production build, but warms its modules).
    expect((await page(otherAgent, '/settings/profile', otherCookie)).status).toBe(200);
    expect((await page(busyAgent, '/settings/profile', busyCookie)).status).toBe(200);

    const deadline = Date.now() + DURATION_MS;
    const busy: { status: number; ms: number }[] = [];
    const other: { status: number; ms: number }[] = [];
    const busySlot = async () => {
      while (Date.now() < deadline) busy.push(await page(busyAgent, '/settings/profile', busyCookie));
    };
    const otherLoop = async () => {
      // Starts once the busy user's renders are all in flight.
      await new Promise((resolve) => setTimeout(resolve, 500));
      while (Date.now() < deadline) {
        other.push(await page(otherAgent, '/settings/profile', otherCookie));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    await Promise.all([...Array.from({ length: BUSY_IN_FLIGHT }, busySlot), otherLoop()]);
    busyAgent.destroy();
    otherAgent.destroy();

    const busyMedian = median(busy.map((r) => r.ms));
    const otherMedian = median(other.map((r) => r.ms));
    console.log(
      `page turns: busy user ${busy.length} pages, median ${busyMedian.toFixed(0)} ms; ` +
        `other user ${other.length} pages, median ${otherMedian.toFixed(0)} ms, ` +
        `max ${Math.max(...other.map((r) => r.ms)).toFixed(0)} ms`,
    );
    // Everyone is answered: the busy user waits its turn rather than being refused.
    expect(busy.every((r) => r.status === 200)).toBe(true);
    expect(other.every((r) => r.status === 200)).toBe(true);
    expect(other.length).toBeGreaterThan(3);
    // The other user waits for the few renders running at most; the busy user for its own dozen.
    expect(otherMedian).toBeLessThan(busyMedian / 2);
  },
  DURATION_MS + 120_000,
);
