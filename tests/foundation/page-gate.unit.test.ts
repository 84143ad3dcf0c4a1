// Page turns (http/page-gate.ts) as the page requests meet them on a real node:http server: a
// signed-in user is one caller from any address, a session cookie whose token does not verify
// counts as its address and never as the user it names, the callers of one address together
// hold at most their address's share while another address is served at once, and only this
// process's own re-requests (a sealed stamp on a loopback connection) skip the queue; a page
// whose browser went away while it waited is dropped from the queue.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import {
  createTokenSigner,
  signAccessToken,
  type TokenSigner,
} from '../../src/server/identity/access-tokens.js';
import { createPageGate, type PageGate } from '../../src/server/http/page-gate.js';
import { CLIENT_ADDRESS_HEADER, stampClientAddress } from '../../src/server/web-session/client-address.js';
import {
  sessionCookieName,
  sessionCookies,
  type StoredSession,
} from '../../src/server/web-session/cookies.js';

const AUTH_URL = 'http://tenantry.test/auth/v1';
const COOKIE = sessionCookieName(AUTH_URL);
const signer = createTokenSigner({
  secret: 'page-gate-test-secret-of-at-least-32-chars',
  issuer: AUTH_URL,
  ttlSeconds: 3600,
});
const otherSigner = createTokenSigner({
  secret: 'another-deployments-secret-of-32-chars-or-more',
  issuer: AUTH_URL,
  ttlSeconds: 3600,
});

/** The session cookie header a browser signed in as `userId` sends, its token signed by `by`. */
async function cookieFor(userId: string, by: TokenSigner = signer): Promise<string> {
  const { token } = await signAccessToken(by, {
    userId,
    aud: 'authenticated',
    role: 'authenticated',
    email: `${userId}@example.com`,
    phone: '',
    appMetadata: {},
    userMetadata: {},
    isAnonymous: false,
    sessionId: `session-${userId}`,
    aal: 'aal1',
    amr: [{ method: 'password', timestamp: Math.floor(Date.now() / 1000) }],
  });
  const session: StoredSession = {
    access_token: token,
    refresh_token: 'r',
    token_type: 'bearer',
    expires_in: 3600,
    expires_at: Math.floor(Date.now() / 1000) + 3600,
    user: { id: userId },
  };
  return sessionCookies(COOKIE, session, [], false)
    .map((cookie) => `${cookie.name}=${encodeURIComponent(cookie.value)}`)
    .join('; ');
}

/** A page server: every request takes its turn, then is held until the test releases its label. */
class PageServer {
  readonly started: string[] = [];
  private readonly release = new Map<string, () => void>();
  private server!: Server;
  port = 0;

  constructor(readonly gate: PageGate) {}

  async listen(): Promise<void> {
    this.server = createServer((req, res) => {
      // As main.ts hands a request to the web app: decided before the stamp, then stamped.
      const self = this.gate.isSelfRequest(req);
      const client = stampClientAddress(req, true);
      const page = async (r: IncomingMessage) => {
        const label = String(r.headers['x-label']);
        this.started.push(label);
        await new Promise<void>((resolve) => this.release.set(label, resolve));
        res.end(label);
      };
      void (self ? page(req) : this.gate.run(req, res, client, (r) => page(r)));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Sends a page request as `address` (X-Forwarded-For; the server trusts its proxy). */
  request(
    label: string,
    address: string,
    headers: Record<string, string> = {},
    signal?: AbortSignal,
  ): Promise<string> {
    return fetch(`http://127.0.0.1:${this.port}/page`, {
      headers: { 'x-label': label, 'x-forwarded-for': address, ...headers },
      signal,
    })
      .then((res) => res.text())
      .catch(() => 'closed');
  }

  finish(label: string): void {
    const release = this.release.get(label);
    if (!release) throw new Error(`${label} has not started`);
    release();
  }

  finishAll(): void {
    for (const release of this.release.values()) release();
  }

  async close(): Promise<void> {
    this.finishAll();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/**
 * The requests started once `count` have (or after a second), and a moment more for any that
 * should not have. Each test releases its pages well within a second: a page running longer
 * marks its caller slow, and the gate then gives a slow caller one turn at a time.
 */
async function startedOnce(server: PageServer, count: number): Promise<string[]> {
  const deadline = Date.now() + 1000;
  while (server.started.length < count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
  return [...server.started];
}

/** The requests started a moment from now: for a request that must stay waiting. */
async function startedSoon(server: PageServer): Promise<string[]> {
  await new Promise((resolve) => setTimeout(resolve, 150));
  return [...server.started];
}

let server: PageServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function pageServer(limits: {
  capacity: number;
  callerConcurrency: number;
  addressConcurrency: number;
}) {
  server = new PageServer(createPageGate({ ...limits, signer, authUrl: AUTH_URL }));
  await server.listen();
  return server;
}

describe('page turns', () => {
  test('a signed-in user is one caller from every address; anonymous visitors are their address', async () => {
    const pages = await pageServer({ capacity: 20, callerConcurrency: 2, addressConcurrency: 20 });
    const cookie = await cookieFor('11111111-1111-4111-8111-111111111111');
    const answers = [
      ...['a', 'b', 'c'].map((n) => pages.request(`user-${n}`, '192.0.2.1', { cookie })),
      ...['d', 'e', 'f'].map((n) => pages.request(`user-${n}`, '198.51.100.1', { cookie })),
      ...['a', 'b', 'c'].map((n) => pages.request(`anon1-${n}`, '192.0.2.1')),
      ...['a', 'b', 'c'].map((n) => pages.request(`anon2-${n}`, '198.51.100.1')),
    ];
    const started = await startedOnce(pages, 6);
    // Two for the user wherever it is, two for each anonymous address.
    expect(started.filter((l) => l.startsWith('user-'))).toHaveLength(2);
    expect(started.filter((l) => l.startsWith('anon1-'))).toHaveLength(2);
    expect(started.filter((l) => l.startsWith('anon2-'))).toHaveLength(2);
    // Everyone is answered in the end, turn by turn.
    const deadline = Date.now() + 5000;
    while (pages.started.length < 12 && Date.now() < deadline) {
      pages.finishAll();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    pages.finishAll();
    expect((await Promise.all(answers)).sort()).toEqual([...pages.started].sort());
  });

  test('a page abandoned while it waits never renders and gives its place to the next', async () => {
    const pages = await pageServer({ capacity: 20, callerConcurrency: 1, addressConcurrency: 20 });
    void pages.request('first', '192.0.2.3');
    expect(await startedOnce(pages, 1)).toEqual(['first']);
    // The browser navigates on while its page waits behind the first: it closes that request.
    const navigatedAway = new AbortController();
    const abandoned = pages.request('abandoned', '192.0.2.3', {}, navigatedAway.signal);
    expect(await startedSoon(pages)).toEqual(['first']);
    const next = pages.request('next', '192.0.2.3');
    await startedSoon(pages);
    navigatedAway.abort();
    expect(await abandoned).toBe('closed');
    await new Promise((resolve) => setTimeout(resolve, 50));
    pages.finish('first');
    expect(await startedOnce(pages, 2)).toEqual(['first', 'next']);
    pages.finish('next');
    expect(await next).toBe('next');
  });

  test("a cookie whose token does not verify is its address's, never the user's it names", async () => {
    const pages = await pageServer({ capacity: 20, callerConcurrency: 2, addressConcurrency: 20 });
    const victim = '22222222-2222-4222-8222-222222222222';
    const forged = await cookieFor(victim, otherSigner);
    // Someone elsewhere fills two turns with a cookie naming the victim, signed by another key.
    void pages.request('forged-1', '203.0.113.9', { cookie: forged });
    void pages.request('forged-2', '203.0.113.9', { cookie: forged });
    expect(await startedOnce(pages, 2)).toEqual(expect.arrayContaining(['forged-1', 'forged-2']));
    // The victim's own turns are untouched: both start at once.
    const real = await cookieFor(victim);
    void pages.request('victim-1', '192.0.2.7', { cookie: real });
    void pages.request('victim-2', '192.0.2.7', { cookie: real });
    expect(await startedOnce(pages, 4)).toEqual(expect.arrayContaining(['victim-1', 'victim-2']));
    // And the forged cookie's third waits behind its address's share, as an anonymous visitor would.
    void pages.request('forged-3', '203.0.113.9', { cookie: forged });
    expect(await startedSoon(pages)).not.toContain('forged-3');
    pages.finish('forged-1');
    expect(await startedOnce(pages, 5)).toContain('forged-3');
  });

  test("many accounts of one address hold at most the address's share; another address is served at once", async () => {
    const pages = await pageServer({ capacity: 8, callerConcurrency: 2, addressConcurrency: 4 });
    const accounts = await Promise.all(
      [1, 2, 3, 4, 5, 6].map((n) => cookieFor(`33333333-3333-4333-8333-00000000000${n}`)),
    );
    // Six accounts from one address, two pages each: twelve asked, four run.
    accounts.forEach((cookie, i) => {
      for (const n of [1, 2]) void pages.request(`crowd-${i}.${n}`, '192.0.2.50', { cookie });
    });
    const crowd = await startedOnce(pages, 4);
    expect(crowd.filter((l) => l.startsWith('crowd-'))).toHaveLength(4);
    // A neighbour from another address starts at once, beside the crowd's waiting eight.
    const neighbour = await cookieFor('44444444-4444-4444-8444-444444444444');
    const answered = pages.request('neighbour', '198.51.100.50', { cookie: neighbour });
    expect(await startedOnce(pages, 5)).toContain('neighbour');
    pages.finish('neighbour');
    expect(await answered).toBe('neighbour');
    // The crowd stays at its share: one of its pages ends, one more of its pages starts.
    pages.finish(crowd[0]!);
    const after = await startedOnce(pages, 6);
    expect(after.filter((l) => l.startsWith('crowd-'))).toHaveLength(5);
  });

  test("only this process's own stamped re-request on a loopback connection skips its turn", async () => {
    const pages = await pageServer({ capacity: 20, callerConcurrency: 1, addressConcurrency: 20 });
    // A stamp this process made, as the server attaches it before handing a page to the web app.
    const original = { headers: {}, socket: { remoteAddress: '192.0.2.80' } } as unknown as IncomingMessage;
    stampClientAddress(original, false);
    const sealed = String(original.headers[CLIENT_ADDRESS_HEADER]);
    const forgedStamp = `${Buffer.alloc(32, 7).toString('base64url')} 192.0.2.80 192.0.2.80`;

    void pages.request('first', '192.0.2.80');
    expect(await startedOnce(pages, 1)).toEqual(['first']);
    // A client's made-up stamp is overwritten and waits its turn like any request.
    void pages.request('made-up', '192.0.2.80', { [CLIENT_ADDRESS_HEADER]: forgedStamp });
    expect(await startedSoon(pages)).not.toContain('made-up');
    // The sealed stamp (the web app rendering a redirect target for the same client) runs now.
    void pages.request('self', '192.0.2.80', { [CLIENT_ADDRESS_HEADER]: sealed });
    expect(await startedOnce(pages, 2)).toContain('self');
  });
});
