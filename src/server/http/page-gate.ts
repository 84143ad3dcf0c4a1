// In charge of fair turns for page requests (everything the web app answers), as the data API
// has for its requests: one caller runs WEB_CALLER_CONCURRENCY page requests at once and all the
// callers of one address WEB_ADDRESS_CONCURRENCY; the rest wait their turn, so a caller sending
// many slow or heavy pages delays its own pages, not other people's. The caller is the signed-in
// user when the session cookie carries a valid access token (checked as the pages check it), else
// the client's address. The web app's requests to itself (a server action rendering its redirect
// target) already run inside their caller's turn and are not queued again. A page whose browser
// went away while it waited (navigated on, closed the tab) leaves the queue without rendering.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { verifyAccessToken, type TokenSigner } from '../identity/access-tokens.js';
import { readClientStamp, isLoopback, CLIENT_ADDRESS_HEADER } from '../web-session/client-address.js';
import { readSession, sessionCookieName } from '../web-session/cookies.js';
import { addressGroup, ipAddress } from './client-address.js';
import { HttpError } from './errors.js';
import { whileConnected } from './client-gone.js';
import { ClientGoneError, FairGate } from './fair-gate.js';

/** How long a page request may wait for its caller's turn. */
const MAX_WAIT_MS = 10_000;
/** Page requests one caller may have waiting; more are refused with 429. */
const MAX_WAITING_PER_CALLER = 64;
/**
 * A page taking this long marks its caller slow (one request at a time while others use the
 * web app). Higher than the data API's 100 ms: a page render runs several statements and React.
 */
const SLOW_PAGE_MS = 1000;

export interface PageGateOptions {
  /** page requests running at once, over all callers */
  capacity: number;
  callerConcurrency: number;
  addressConcurrency: number;
  signer: TokenSigner;
  /** the identity service's public URL, which names the session cookie */
  authUrl: string;
}

export type PageHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** The request's own client, as stamped on it by stampClientAddress. */
export interface PageClient {
  client: string | null;
}

export interface PageGate {
  /**
   * True for the web app's request to itself carrying a client stamp it made; decide this before
   * the request is stamped (the stamp is then overwritten or kept).
   */
  isSelfRequest(req: IncomingMessage): boolean;
  /** Runs `handler` in the caller's turn, or answers 429/503 when no turn comes in time. */
  run(req: IncomingMessage, res: ServerResponse, client: PageClient, handler: PageHandler): Promise<void>;
}

export function createPageGate(options: PageGateOptions): PageGate {
  const gate = new FairGate({
    capacity: options.capacity,
    perCaller: options.callerConcurrency,
    perAddress: options.addressConcurrency,
    perCallerSetting: 'WEB_CALLER_CONCURRENCY',
    maxWaitingPerCaller: MAX_WAITING_PER_CALLER,
    maxWaitMs: MAX_WAIT_MS,
    slowMs: SLOW_PAGE_MS,
  });
  const cookieName = sessionCookieName(options.authUrl);

  /** The signed-in user's id, when the session cookie holds an access token that verifies. */
  const signedInUser = async (req: IncomingMessage): Promise<string | null> => {
    const header = req.headers.cookie;
    if (!header || !header.includes(cookieName)) return null;
    const cookies = parseCookies(header);
    const session = readSession(cookieName, (name) => cookies.get(name));
    if (!session || typeof session.access_token !== 'string') return null;
    try {
      return (await verifyAccessToken(options.signer, session.access_token)).sub;
    } catch {
      return null; // expired or forged: the page treats it as signed out, and so do turns
    }
  };

  return {
    isSelfRequest(req) {
      const sent = req.headers[CLIENT_ADDRESS_HEADER];
      return (
        isLoopback(ipAddress(req.socket?.remoteAddress)) &&
        typeof sent === 'string' &&
        readClientStamp(sent) !== null
      );
    },
    async run(req, res, client, handler) {
      const address = addressGroup(client.client);
      const user = await signedInUser(req);
      const caller = user ? `user:${user}` : `address:${address ?? 'unknown'}`;
      let started = false;
      try {
        await whileConnected(req, (gone) =>
          gate.run(
            caller,
            () => {
              started = true;
              return handler(req, res);
            },
            address,
            gone,
          ),
        );
      } catch (error) {
        // Nobody is left to answer: the page was abandoned before its turn came (499 for the logs).
        if (error instanceof ClientGoneError) {
          res.statusCode = 499;
          return;
        }
        // Only the gate's own refusals are answered here; the web app answers its errors itself.
        if (started || !(error instanceof HttpError) || res.headersSent) throw error;
        refuse(res, error);
      }
    },
  };
}

/** A short plain answer for a page request that got no turn: 429 at once, 503 after waiting. */
function refuse(res: ServerResponse, error: HttpError): void {
  const status = error.status === 429 ? 429 : 503;
  const message =
    status === 429
      ? 'Too many page requests at once from you; retry in a moment.'
      : 'The service is busy; retry in a moment.';
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'retry-after': '1',
    'cache-control': 'no-store',
  });
  res.end(`${message}\n`);
}

/** name -> value of a Cookie header; the first of a repeated name wins, as browsers send it. */
function parseCookies(header: string): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const name = pair.slice(0, eq).trim();
    if (cookies.has(name)) continue;
    const value = pair.slice(eq + 1).trim();
    try {
      cookies.set(name, decodeURIComponent(value));
    } catch {
      cookies.set(name, value);
    }
  }
  return cookies;
}
