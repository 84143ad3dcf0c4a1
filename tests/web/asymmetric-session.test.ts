// The web pages verify session cookies with the same key set as the APIs: with JWT_KEYS (ES256)
// a session issued by the identity service opens the pages, and a cookie carrying a token signed
// by a stranger's key under the real kid (or an unknown kid) does not.
import { SignJWT, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { sessionCookies, type StoredSession } from '../../src/server/web-session/cookies.js';
import { startApp, type AppProcess } from '../support/app-process.js';

let app: AppProcess;
beforeAll(async () => {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'web-key', alg: 'ES256' };
  app = await startApp({ JWT_KEYS: JSON.stringify([jwk]), JWT_SECRET_ACCEPTED: 'false' });
}, 300_000);
afterAll(async () => app?.stop());

function cookieHeader(session: StoredSession): string {
  return sessionCookies('sb-localhost-auth-token', session, [], false)
    .map((c) => `${c.name}=${c.value}`)
    .join('; ');
}

async function page(path: string, session: StoredSession) {
  return fetch(`${app.url}${path}`, { headers: { cookie: cookieHeader(session) }, redirect: 'manual' });
}

test('a session signed with the configured ES256 key opens the pages; forged ones do not', async () => {
  const res = await fetch(`${app.url}/auth/v1/signup`, {
    method: 'POST',
    headers: { apikey: app.env.PROJECT_API_KEY!, 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'keys@example.com', password: 'correct horse battery' }),
  });
  expect(res.status).toBe(200);
  const session = (await res.json()) as StoredSession;
  expect(decodeProtectedHeader(session.access_token)).toMatchObject({ alg: 'ES256', kid: 'web-key' });

  const signedIn = await page('/workspaces', session);
  expect(signedIn.status).toBe(200);
  expect(await signedIn.text()).toContain('Signed in as keys@example.com');

  const stranger = await generateKeyPair('ES256');
  const claims = decodeJwt(session.access_token);
  for (const kid of ['web-key', 'unknown-key']) {
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
      .sign(stranger.privateKey);
    const refused = await page('/workspaces', { ...session, access_token: forged });
    // not shown: sent to renew the session (the refresh token decides) instead
    expect(refused.status).toBeGreaterThanOrEqual(300);
    expect(refused.status).toBeLessThan(400);
    expect(refused.headers.get('location')).toContain('/session/refresh');
  }
  // HS256 with JWT_SECRET is refused once JWT_SECRET_ACCEPTED is off, in the pages too
  const legacy = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .sign(new TextEncoder().encode(app.env.JWT_SECRET!));
  const refusedLegacy = await page('/workspaces', { ...session, access_token: legacy });
  expect(refusedLegacy.headers.get('location')).toContain('/session/refresh');
});
