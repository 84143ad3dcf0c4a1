// An attacker at the HTTP edge while another tenant works, against the whole process after a
// page view: thousands of WebSocket handshakes to API paths, pages and unknown paths, and over a
// thousand connections held open with half-sent headers (reopened as the server cuts them), from
// several addresses; meanwhile the neighbour reads its projects through the data API and signs
// in. The neighbour's requests must all succeed with p99 under a second, and once the attack
// stops the process must be back to its descriptors, with no connection left half-closed. Its
// resident memory before and after is printed, not asserted: without a forced collection it
// measures when V8 and the allocator give memory back (from +21 to +170 MB for the same attack,
// depending on the machine's load), not what was left behind, and memory targets belong to the
// benchmarks.
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startApp, type AppProcess } from '../support/app-process.js';
import {
  descriptors,
  exchange,
  openIdle,
  residentBytes,
  settle,
  websocketRequest,
} from '../support/raw-http.js';

const ATTACK_SECONDS = 15;
/** handshake senders, each pausing between handshakes: about 500 handshakes a second in all */
const UPGRADE_WORKERS = 10;
const UPGRADE_PAUSE_MS = 20;
/** connections the attacker keeps open with half its headers sent */
const HALF_OPEN = 1200;
const PASSWORD = 'correct horse battery';

let app: AppProcess;
let port: number;
let neighbours: { email: string; token: string }[];
let neighbourWs: string;

async function api(path: string, init: RequestInit & { token?: string } = {}): Promise<Response> {
  return fetch(`${app.url}${path}`, {
    ...init,
    headers: {
      apikey: app.env.PROJECT_API_KEY!,
      'content-type': 'application/json',
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
    },
  });
}

async function signIn(email: string): Promise<Response> {
  return api('/auth/v1/token?grant_type=password', {
    method: 'POST',
    body: JSON.stringify({ email, password: PASSWORD }),
  });
}

beforeAll(async () => {
  // Production defaults, but the neighbours sign in more often than the sign-in limits allow,
  // which is not what this test is about.
  app = await startApp({ RATE_LIMIT_SIGNIN_PER_EMAIL: '1000', RATE_LIMIT_SIGNIN_PER_ADDRESS: '1000' });
  port = Number(new URL(app.url).port);
  neighbours = [];
  for (let i = 0; i < 3; i++) {
    const email = `edge-neighbour-${i}-${Date.now()}@example.com`;
    const signedUp = await api('/auth/v1/signup', {
      method: 'POST',
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(signedUp.status).toBe(200);
    const token = ((await signedUp.json()) as { access_token: string }).access_token;
    neighbours.push({ email, token });
  }
  const created = await api('/rest/v1/rpc/create_workspace', {
    method: 'POST',
    token: neighbours[0]!.token,
    body: JSON.stringify({ name: 'Neighbour' }),
  });
  expect(created.status).toBe(200);
  neighbourWs = ((await created.json()) as { id: string }).id;
  const projects = Array.from({ length: 20 }, (_, i) => ({ workspace_id: neighbourWs, name: `p${i}` }));
  const inserted = await api('/rest/v1/projects', {
    method: 'POST',
    token: neighbours[0]!.token,
    body: JSON.stringify(projects),
  });
  expect(inserted.status).toBe(201);
  // One page view: the moment Next.js used to start listening for upgrades on our server.
  const page = await fetch(`${app.url}/sign-in`);
  expect(page.status).toBe(200);
  await page.text();
}, 300_000);
afterAll(async () => app?.stop());

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
}

/** Connections to the server's port that the server has not closed after its client did. */
function closeWaitOnPort(): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .filter((line) => {
      const fields = line.trim().split(/\s+/);
      return fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '08';
    }).length;
}

test(
  'an upgrade flood and half-open connections do not slow a neighbour or leave anything behind',
  async () => {
    const baselineFds = descriptors(app.pid);
    const baselineRss = residentBytes(app.pid);
    const deadline = Date.now() + ATTACK_SECONDS * 1000;

    const upgradeStatuses = new Map<string, number>();
    let upgrades = 0;
    const upgradeWorker = async (w: number) => {
      const paths = ['/api/health', '/rest/v1/projects', '/sign-in', '/realtime/v1/websocket', '/x'];
      for (let i = 0; Date.now() < deadline; i++) {
        const result = await exchange(port, websocketRequest(paths[i % paths.length]!), {
          localAddress: `127.0.3.${((w * 7 + i) % 50) + 1}`,
          waitMs: 2000,
        });
        upgrades += 1;
        const status =
          result.closedAfterMs === null ? 'held open' : result.response.slice(9, 12) || 'closed unanswered';
        upgradeStatuses.set(status, (upgradeStatuses.get(status) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, UPGRADE_PAUSE_MS));
      }
    };

    const halfOpen = new Set<Socket>();
    let halfOpened = 0;
    const holdHalfOpen = async (slot: number) => {
      while (Date.now() < deadline) {
        const socket = await openIdle(port, `127.0.4.${(slot % 10) + 1}`).catch(() => null);
        if (!socket) continue;
        halfOpened += 1;
        halfOpen.add(socket);
        socket.write('GET /api/health HTTP/1.1\r\nHost: localhost\r\n');
        await new Promise<void>((resolve) => {
          const stop = setTimeout(resolve, Math.max(0, deadline - Date.now()));
          socket.once('close', () => {
            clearTimeout(stop);
            resolve();
          });
        });
        halfOpen.delete(socket);
        socket.destroy();
      }
    };

    const latencies: number[] = [];
    const signInLatencies: number[] = [];
    const failures: string[] = [];
    const neighbourLoop = async () => {
      // Starts once the half-open connections are in place.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      for (let i = 0; Date.now() < deadline; i++) {
        const user = neighbours[i % neighbours.length]!;
        const started = performance.now();
        try {
          if (i % 10 === 9) {
            const res = await signIn(user.email);
            await res.arrayBuffer();
            signInLatencies.push(performance.now() - started);
            if (res.status !== 200) failures.push(`sign-in ${res.status}`);
          } else {
            const res = await api(
              `/rest/v1/projects?select=id,name&workspace_id=eq.${neighbourWs}&order=name`,
              {
                token: neighbours[0]!.token,
              },
            );
            const body = (await res.json()) as unknown[];
            if (res.status !== 200 || body.length !== 20) failures.push(`read ${res.status}`);
          }
        } catch (error) {
          failures.push(`error ${(error as Error).message}`);
        }
        latencies.push(performance.now() - started);
      }
    };

    let peakFds = 0;
    const watch = (async () => {
      while (Date.now() < deadline) {
        peakFds = Math.max(peakFds, descriptors(app.pid));
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();

    await Promise.all([
      ...Array.from({ length: UPGRADE_WORKERS }, (_, w) => upgradeWorker(w)),
      ...Array.from({ length: HALF_OPEN }, (_, slot) => holdHalfOpen(slot)),
      neighbourLoop(),
      neighbourLoop(),
      watch,
    ]);
    for (const socket of halfOpen) socket.destroy();

    latencies.sort((a, b) => a - b);
    signInLatencies.sort((a, b) => a - b);
    const fdsAfter = await settle(
      () => descriptors(app.pid),
      (n) => n <= baselineFds + 10,
      15_000,
    );
    const closeWait = await settle(closeWaitOnPort, (n) => n === 0, 5000);
    const rssAfter = residentBytes(app.pid);
    console.log(
      `hostile upgrades: ${upgrades} handshakes ${JSON.stringify(Object.fromEntries(upgradeStatuses))}, ` +
        `${halfOpened} half-open connections; neighbour ${latencies.length} requests, ` +
        `p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, ` +
        `max ${(latencies.at(-1) ?? 0).toFixed(1)} ms; ${signInLatencies.length} sign-ins, ` +
        `p50 ${percentile(signInLatencies, 50).toFixed(1)} ms; descriptors ${baselineFds} before, ` +
        `${peakFds} at peak, ${fdsAfter} after; CLOSE-WAIT after ${closeWait}; ` +
        `resident ${(baselineRss / 1e6).toFixed(0)} MB before, ${(rssAfter / 1e6).toFixed(0)} MB after`,
    );

    expect(failures).toEqual([]);
    expect(latencies.length).toBeGreaterThan(100);
    expect(signInLatencies.length).toBeGreaterThan(5);
    expect(percentile(latencies, 99)).toBeLessThan(1000);
    // Every handshake was answered and closed, none held: 404, or 401 at realtime's socket, which
    // refuses a handshake without a project key before upgrading.
    expect(upgrades).toBeGreaterThan(2000);
    expect([...upgradeStatuses.keys()].sort()).toEqual(['401', '404']);
    // The server cut the half-open connections at its headers timeout (the attacker reopened them).
    expect(halfOpened).toBeGreaterThan(HALF_OPEN);
    // Nothing is left behind once the attack stops.
    expect(fdsAfter).toBeLessThanOrEqual(baselineFds + 10);
    expect(closeWait).toBe(0);
  },
  ATTACK_SECONDS * 1000 + 120_000,
);
