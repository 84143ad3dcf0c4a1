// The OAuth 2.1 server's authorization code flow: a client sends the browser to /oauth/authorize,
// the user (supabase-js auth.oauth) reads and answers the request, the client (plain fetch)
// exchanges the code with its PKCE verifier at /oauth/token and then reads data through
// supabase-js as the user, under row-level security. Refresh rotation and reuse, every refusal
// (verifier, redirect URI, expiry, replay, client authentication, PKCE), grants and their
// revocation ending access at once, the audit lines, discovery, and nothing served while off.
import { createHash, randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';

const REDIRECT = 'https://client.example.com/callback';

let server: TestServer;
let owner: SignedIn;
let stranger: SignedIn;
let ownWorkspace: string;
let strangersWorkspace: string;

beforeAll(async () => {
  server = await startTestServer({
    OAUTH_SERVER_ENABLED: 'true',
    APP_URL: 'https://app.example.com',
    REFRESH_TOKEN_REUSE_INTERVAL: '0',
  });
  owner = await signUp(server, 'oauth-owner');
  stranger = await signUp(server, 'oauth-stranger');
  ownWorkspace = await workspace(server, owner, 'Owner Co');
  strangersWorkspace = await workspace(server, stranger, 'Stranger Co');
});
afterAll(async () => server?.close());

interface RegisteredClient {
  client_id: string;
  client_secret?: string;
}

async function registerClient(
  method: 'client_secret_basic' | 'client_secret_post' | 'none' = 'client_secret_basic',
  extra: Record<string, unknown> = {},
): Promise<RegisteredClient> {
  const { data, error } = await server.adminClient().auth.admin.oauth.createClient({
    client_name: `Reports ${randomBytes(3).toString('hex')}`,
    client_uri: 'https://client.example.com',
    logo_uri: 'https://client.example.com/logo.png',
    redirect_uris: [REDIRECT, 'http://localhost:8123/cb'],
    token_endpoint_auth_method: method,
    ...extra,
  } as Parameters<ReturnType<TestServer['adminClient']>['auth']['admin']['oauth']['createClient']>[0]);
  if (error || !data) throw new Error(`client registration failed: ${error?.message}`);
  return data as RegisteredClient;
}

function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  return { verifier, challenge };
}

async function authorize(query: Record<string, string>) {
  const url = new URL(`${server.url}/auth/v1/oauth/authorize`);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const response = await fetch(url, { redirect: 'manual' });
  const text = await response.text();
  return { status: response.status, location: response.headers.get('location'), text };
}

/** The client's request, up to the consent page's authorization id. */
async function startFor(client: RegisteredClient, scope = 'email profile', state = 'st-123') {
  const pkce = pkcePair();
  const started = await authorize({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
    state,
    scope,
  });
  expect(started.status).toBe(302);
  const consent = new URL(started.location!);
  expect(`${consent.origin}${consent.pathname}`).toBe('https://app.example.com/oauth/consent');
  return { id: consent.searchParams.get('authorization_id')!, ...pkce };
}

/** The whole front channel: request, the user's approval, the code from the redirect. */
async function codeFor(client: RegisteredClient, user: SignedIn = owner, scope = 'email profile') {
  const { id, verifier } = await startFor(client, scope);
  const details = await user.client.auth.oauth.getAuthorizationDetails(id);
  expect(details.error).toBeNull();
  let redirect: string;
  if (details.data && 'redirect_url' in details.data) {
    redirect = details.data.redirect_url;
  } else {
    const approved = await user.client.auth.oauth.approveAuthorization(id, { skipBrowserRedirect: true });
    expect(approved.error).toBeNull();
    redirect = approved.data!.redirect_url;
  }
  const url = new URL(redirect);
  expect(url.searchParams.get('state')).toBe('st-123');
  return { code: url.searchParams.get('code')!, verifier, id };
}

async function token(
  params: Record<string, string>,
  auth: { basic?: [string, string]; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    ...auth.headers,
  };
  if (auth.basic) {
    headers.authorization = `Basic ${Buffer.from(`${auth.basic[0]}:${auth.basic[1]}`).toString('base64')}`;
  }
  const response = await fetch(`${server.url}/auth/v1/oauth/token`, {
    method: 'POST',
    headers,
    body: new URLSearchParams(params).toString(),
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, string>,
    headers: response.headers,
  };
}

const basicOf = (client: RegisteredClient): [string, string] => [client.client_id, client.client_secret!];

async function exchange(client: RegisteredClient, code: string, verifier: string) {
  return token(
    { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT },
    { basic: basicOf(client) },
  );
}

/** Workspaces the token can see through the data API, or the refusal's status. */
async function workspacesSeenWith(accessToken: string): Promise<string[] | number> {
  const { data, error, status } = await server.clientWithToken(accessToken).from('workspaces').select('id');
  if (error) return status;
  return (data ?? []).map((w: { id: string }) => w.id);
}

async function auditActions(clientId: string): Promise<string[]> {
  const { rows } = await server.pool.query<{ action: string }>(
    `select action from public.audit_events where target_type = 'oauth_client' and target_id = $1 order by id`,
    [clientId],
  );
  return rows.map((r) => r.action);
}

describe('the authorization code flow with PKCE', () => {
  test('consent, code, token: the client reads as the user, under RLS, with a client_id claim', async () => {
    const client = await registerClient();
    const { id, verifier } = await startFor(client);

    const details = await owner.client.auth.oauth.getAuthorizationDetails(id);
    expect(details.error).toBeNull();
    expect(details.data).toMatchObject({
      authorization_id: id,
      redirect_uri: REDIRECT,
      scope: 'email profile',
      client: {
        id: client.client_id,
        uri: 'https://client.example.com',
        logo_uri: 'https://client.example.com/logo.png',
      },
      user: { id: owner.id, email: owner.email },
    });

    // another signed-in person cannot see or answer it
    const other = await stranger.client.auth.oauth.getAuthorizationDetails(id);
    expect(other.error?.status).toBe(404);
    const otherApprove = await stranger.client.auth.oauth.approveAuthorization(id, {
      skipBrowserRedirect: true,
    });
    expect(otherApprove.error?.status).toBe(404);

    const approved = await owner.client.auth.oauth.approveAuthorization(id, { skipBrowserRedirect: true });
    expect(approved.error).toBeNull();
    const back = new URL(approved.data!.redirect_url);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe('st-123');
    const code = back.searchParams.get('code')!;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // answered once only
    const twice = await owner.client.auth.oauth.approveAuthorization(id, { skipBrowserRedirect: true });
    expect(twice.error?.status).toBe(400);

    // the code is kept only as its digest
    const stored = await server.pool.query<{ code_hash: Buffer }>(
      'select code_hash from auth.oauth_authorizations where id = $1',
      [id],
    );
    expect(stored.rows[0]!.code_hash.equals(createHash('sha256').update(code).digest())).toBe(true);

    const issued = await exchange(client, code, verifier);
    expect(issued.status).toBe(200);
    expect(issued.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(issued.body).sort()).toEqual(
      ['access_token', 'expires_in', 'refresh_token', 'token_type'].sort(),
    );
    const claims = decodeJwt(issued.body.access_token!);
    expect(claims).toMatchObject({ sub: owner.id, role: 'authenticated', client_id: client.client_id });

    // the token is the user's: their workspace, not the stranger's
    const seen = await workspacesSeenWith(issued.body.access_token!);
    expect(seen).toContain(ownWorkspace);
    expect(seen).not.toContain(strangersWorkspace);
    const me = await server.client().auth.getUser(issued.body.access_token!);
    expect(me.data.user?.id).toBe(owner.id);

    // a session of its own, naming the client
    const session = await server.pool.query<{ oauth_client_id: string; user_id: string }>(
      'select oauth_client_id, user_id from auth.sessions where id = $1',
      [claims.session_id],
    );
    expect(session.rows[0]).toEqual({ oauth_client_id: client.client_id, user_id: owner.id });

    expect(await auditActions(client.client_id)).toEqual([
      'oauth_client_created',
      'oauth_authorization_approved',
      'oauth_token_issued',
    ]);
  });

  test('a request already covered by the consent is answered with the redirect at once', async () => {
    const client = await registerClient();
    await codeFor(client, owner, 'email profile');
    const { id } = await startFor(client, 'email');
    const again = await owner.client.auth.oauth.getAuthorizationDetails(id);
    expect(again.error).toBeNull();
    expect(again.data).toHaveProperty('redirect_url');
    expect(
      new URL((again.data as { redirect_url: string }).redirect_url).searchParams.get('code'),
    ).toBeTruthy();

    // a wider request asks again
    const wider = await startFor(client, 'email openid');
    const asked = await owner.client.auth.oauth.getAuthorizationDetails(wider.id);
    expect(asked.data).toMatchObject({ authorization_id: wider.id, scope: 'email openid' });
  });

  test('deny sends the browser back with access_denied and the state', async () => {
    const client = await registerClient();
    const { id } = await startFor(client);
    await owner.client.auth.oauth.getAuthorizationDetails(id);
    const denied = await owner.client.auth.oauth.denyAuthorization(id, { skipBrowserRedirect: true });
    expect(denied.error).toBeNull();
    const back = new URL(denied.data!.redirect_url);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('st-123');
    expect(back.searchParams.has('code')).toBe(false);
    expect(await auditActions(client.client_id)).toContain('oauth_authorization_denied');
    const grants = await owner.client.auth.oauth.listGrants();
    expect(grants.data?.some((g) => g.client.id === client.client_id)).toBe(false);
  });

  test('a public client proves itself with PKCE alone; client_secret_post sends its secret in the body', async () => {
    const pub = await registerClient('none');
    const { code, verifier } = await codeFor(pub);
    const issued = await token({
      grant_type: 'authorization_code',
      client_id: pub.client_id,
      code,
      code_verifier: verifier,
    });
    expect(issued.status).toBe(200);
    expect(decodeJwt(issued.body.access_token!).client_id).toBe(pub.client_id);

    // without PKCE a public client has nothing to prove itself with: refused at both ends
    const noChallenge = await authorize({
      response_type: 'code',
      client_id: pub.client_id,
      redirect_uri: REDIRECT,
      state: 'p1',
    });
    expect(new URL(noChallenge.location!).searchParams.get('error')).toBe('invalid_request');
    const unproven = await codeFor(pub);
    const noVerifier = await token({
      grant_type: 'authorization_code',
      client_id: pub.client_id,
      code: unproven.code,
    });
    expect(noVerifier.status).toBe(400);
    expect(noVerifier.body.error).toBe('invalid_request');
    // a public client presenting a secret is confused or guessing
    const withSecret = await token({
      grant_type: 'authorization_code',
      client_id: pub.client_id,
      client_secret: 'anything',
      code: unproven.code,
      code_verifier: unproven.verifier,
    });
    expect(withSecret.status).toBe(401);
    const proven = await token({
      grant_type: 'authorization_code',
      client_id: pub.client_id,
      code: unproven.code,
      code_verifier: unproven.verifier,
    });
    expect(proven.status).toBe(200);

    const post = await registerClient('client_secret_post');
    const second = await codeFor(post);
    const viaBasic = await token(
      { grant_type: 'authorization_code', code: second.code, code_verifier: second.verifier },
      { basic: basicOf(post) },
    );
    expect(viaBasic.status).toBe(401);
    expect(viaBasic.body.error).toBe('invalid_client');
    const third = await codeFor(post);
    const viaBody = await token({
      grant_type: 'authorization_code',
      client_id: post.client_id,
      client_secret: post.client_secret!,
      code: third.code,
      code_verifier: third.verifier,
    });
    expect(viaBody.status).toBe(200);
  });
});

describe('refusals', () => {
  test('the authorize endpoint shows, never redirects, until client and redirect URI are known', async () => {
    const client = await registerClient();
    const { challenge } = pkcePair();
    const base = { response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' };
    const before = (await server.pool.query('select count(*)::int as n from auth.oauth_authorizations'))
      .rows[0];

    const wrongRedirect = await authorize({
      ...base,
      client_id: client.client_id,
      redirect_uri: 'https://evil.example.com/callback',
    });
    expect(wrongRedirect.status).toBe(400);
    expect(wrongRedirect.location).toBeNull();
    expect(JSON.parse(wrongRedirect.text)).toMatchObject({ msg: 'invalid redirect_uri' });

    // a prefix of a registered URI is not it
    const prefix = await authorize({
      ...base,
      client_id: client.client_id,
      redirect_uri: `${REDIRECT}/more`,
    });
    expect(prefix.status).toBe(400);

    const unknown = await authorize({ ...base, client_id: crypto.randomUUID(), redirect_uri: REDIRECT });
    expect(unknown.status).toBe(400);
    expect(unknown.location).toBeNull();
    const missing = await authorize({ ...base, redirect_uri: REDIRECT });
    expect(missing.status).toBe(400);

    // known client and URI: the problem goes back to the client, with its state
    const noPkce = await authorize({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      state: 'abc',
    });
    expect(noPkce.status).toBe(302);
    const back = new URL(noPkce.location!);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('state')).toBe('abc');

    const plain = await authorize({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      code_challenge: 'a'.repeat(43),
      code_challenge_method: 'plain',
    });
    expect(new URL(plain.location!).searchParams.get('error')).toBe('invalid_request');
    expect(new URL(plain.location!).searchParams.get('error_description')).toMatch(/S256/);

    const token = await authorize({
      ...base,
      response_type: 'token',
      client_id: client.client_id,
      redirect_uri: REDIRECT,
    });
    expect(new URL(token.location!).searchParams.get('error')).toBe('unsupported_response_type');

    const after = (await server.pool.query('select count(*)::int as n from auth.oauth_authorizations'))
      .rows[0];
    expect(after).toEqual(before);
  });

  test('a wrong verifier is refused and uses the code up', async () => {
    const client = await registerClient();
    const { code, verifier } = await codeFor(client);
    const wrong = await exchange(client, code, pkcePair().verifier);
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_grant');
    const right = await exchange(client, code, verifier);
    expect(right.status).toBe(400);
    expect(right.body.error).toBe('invalid_grant');
    const missing = await token({ grant_type: 'authorization_code', code }, { basic: basicOf(client) });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('invalid_request');
  });

  test('a redirect_uri other than the request’s is refused at the token endpoint', async () => {
    const client = await registerClient();
    const { code, verifier } = await codeFor(client);
    const other = await token(
      {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: 'http://localhost:8123/cb',
      },
      { basic: basicOf(client) },
    );
    expect(other.status).toBe(400);
    expect(other.body.error).toBe('invalid_grant');
  });

  test('an expired code is refused', async () => {
    const client = await registerClient();
    const { code, verifier } = await codeFor(client);
    await server.pool.query(
      `update auth.oauth_authorizations set code_expires_at = now() - interval '1 second'
        where code_hash = $1`,
      [createHash('sha256').update(code).digest()],
    );
    const late = await exchange(client, code, verifier);
    expect(late.status).toBe(400);
    expect(late.body).toMatchObject({
      error: 'invalid_grant',
      error_description: 'Authorization code has expired',
    });
  });

  test('an expired request is not found', async () => {
    const client = await registerClient();
    const { id } = await startFor(client);
    await server.pool.query(
      `update auth.oauth_authorizations set expires_at = now() - interval '1 second' where id = $1`,
      [id],
    );
    const details = await owner.client.auth.oauth.getAuthorizationDetails(id);
    expect(details.error?.status).toBe(404);
  });

  test('a code used twice is refused and ends the session its first use opened', async () => {
    const client = await registerClient();
    const { code, verifier } = await codeFor(client);
    const first = await exchange(client, code, verifier);
    expect(first.status).toBe(200);
    expect(await workspacesSeenWith(first.body.access_token!)).toContain(ownWorkspace);

    const replay = await exchange(client, code, verifier);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    // what the first exchange issued stops working at once
    expect(await workspacesSeenWith(first.body.access_token!)).toBe(401);
    const refreshed = await token(
      { grant_type: 'refresh_token', refresh_token: first.body.refresh_token! },
      { basic: basicOf(client) },
    );
    expect(refreshed.body.error).toBe('invalid_grant');
    expect(await auditActions(client.client_id)).toContain('oauth_code_reused');
  });

  test('another client cannot redeem a code, and a wrong secret is 401 invalid_client', async () => {
    const client = await registerClient();
    const thief = await registerClient();
    const { code, verifier } = await codeFor(client);
    const stolen = await exchange(thief, code, verifier);
    expect(stolen.status).toBe(400);
    expect(stolen.body.error).toBe('invalid_grant');

    const wrongSecret = await token(
      { grant_type: 'authorization_code', code, code_verifier: verifier },
      { basic: [client.client_id, 'not-the-secret'] },
    );
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.body.error).toBe('invalid_client');
    expect(wrongSecret.headers.get('www-authenticate')).toMatch(/^Basic/);
    const noAuth = await token({ grant_type: 'authorization_code', code, code_verifier: verifier });
    expect(noAuth.status).toBe(401);

    // none of that used the code up: its client still redeems it
    const own = await exchange(client, code, verifier);
    expect(own.status).toBe(200);
  });

  test('the token request may be JSON; a parameter sent twice is refused', async () => {
    const client = await registerClient();
    const { code, verifier } = await codeFor(client);
    const post = (body: string, type: string) =>
      fetch(`${server.url}/auth/v1/oauth/token`, {
        method: 'POST',
        headers: {
          'content-type': type,
          authorization: `Basic ${Buffer.from(basicOf(client).join(':')).toString('base64')}`,
        },
        body,
      });
    const twice = await post(
      `grant_type=authorization_code&code=${code}&code=${code}&code_verifier=${verifier}`,
      'application/x-www-form-urlencoded',
    );
    expect(twice.status).toBe(400);
    expect(((await twice.json()) as { error: string }).error).toBe('invalid_request');
    const json = await post(
      JSON.stringify({ grant_type: 'authorization_code', code, code_verifier: verifier }),
      'application/json',
    );
    expect(json.status).toBe(200);
    expect(((await json.json()) as { token_type: string }).token_type).toBe('bearer');
  });

  test('unsupported grant types and a deleted client', async () => {
    const client = await registerClient();
    const password = await token(
      { grant_type: 'password', username: owner.email, password: 'correct horse battery' },
      { basic: basicOf(client) },
    );
    expect(password.status).toBe(400);
    expect(password.body.error).toBe('unsupported_grant_type');

    const issued = await codeFor(client);
    const live = (await exchange(client, issued.code, issued.verifier)).body;
    const { code, verifier } = await codeFor(client);
    await server.adminClient().auth.admin.oauth.deleteClient(client.client_id);
    // the client's sessions end with it
    expect(await workspacesSeenWith(live.access_token!)).toBe(401);
    const gone = await exchange(client, code, verifier);
    expect(gone.status).toBe(401);
    expect(gone.body.error).toBe('invalid_client');
  });
});

describe('refresh', () => {
  test('rotation keeps the client_id; an older token presented again ends the session', async () => {
    const client = await registerClient();
    const { code, verifier } = await codeFor(client);
    const first = (await exchange(client, code, verifier)).body;
    const refresh = (refreshToken: string, who = client) =>
      token({ grant_type: 'refresh_token', refresh_token: refreshToken }, { basic: basicOf(who) });

    const second = await refresh(first.refresh_token!);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect(decodeJwt(second.body.access_token!).client_id).toBe(client.client_id);
    const third = await refresh(second.body.refresh_token!);
    expect(third.status).toBe(200);

    // another client cannot use this session's token, and nothing rotates
    const other = await registerClient();
    const foreign = await refresh(third.body.refresh_token!, other);
    expect(foreign.body.error).toBe('invalid_grant');
    // nor is a person's own sign-in session a client's
    const personal = await refresh(owner.refreshToken);
    expect(personal.body.error).toBe('invalid_grant');

    // the first token again: reuse, the whole session ends
    const reused = await refresh(first.refresh_token!);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
    const after = await refresh(third.body.refresh_token!);
    expect(after.body.error).toBe('invalid_grant');
    expect(await workspacesSeenWith(third.body.access_token!)).toBe(401);
  });
});

describe('grants', () => {
  test('listed with the client and scopes; revoking ends the client’s access at once', async () => {
    const client = await registerClient();
    const user = await signUp(server, 'oauth-grants');
    const { code, verifier } = await codeFor(client, user, 'email profile');
    const issued = (await exchange(client, code, verifier)).body;
    expect(await workspacesSeenWith(issued.access_token!)).toEqual([]);

    const listed = await user.client.auth.oauth.listGrants();
    expect(listed.error).toBeNull();
    expect(listed.data).toHaveLength(1);
    expect(listed.data![0]).toMatchObject({
      client: { id: client.client_id, uri: 'https://client.example.com' },
      scopes: ['email', 'profile'],
    });
    expect(Date.parse(listed.data![0]!.granted_at)).toBeGreaterThan(Date.now() - 60_000);

    // a token issued to the client may not manage grants
    const asClient = await call(server, 'GET', '/auth/v1/user/oauth/grants', {
      headers: { authorization: `Bearer ${issued.access_token}` },
    });
    expect(asClient.status).toBe(403);
    // nor its session's token refreshed at the ordinary /token, which keeps naming the client
    const plain = await call(server, 'POST', '/auth/v1/token?grant_type=refresh_token', {
      body: { refresh_token: issued.refresh_token },
    });
    expect(plain.status).toBe(200);
    expect(decodeJwt(plain.body.access_token as string).client_id).toBe(client.client_id);
    const viaPlain = await call(server, 'GET', '/auth/v1/user/oauth/grants', {
      headers: { authorization: `Bearer ${plain.body.access_token as string}` },
    });
    expect(viaPlain.status).toBe(403);
    issued.access_token = plain.body.access_token as string;
    issued.refresh_token = plain.body.refresh_token as string;

    const revoked = await user.client.auth.oauth.revokeGrant({ clientId: client.client_id });
    expect(revoked.error).toBeNull();
    expect(await workspacesSeenWith(issued.access_token!)).toBe(401);
    const refreshed = await token(
      { grant_type: 'refresh_token', refresh_token: issued.refresh_token! },
      { basic: basicOf(client) },
    );
    expect(refreshed.body.error).toBe('invalid_grant');
    expect((await user.client.auth.oauth.listGrants()).data).toEqual([]);
    // the person's own session is untouched
    expect((await user.client.auth.getUser()).data.user?.id).toBe(user.id);

    const again = await call(server, 'DELETE', `/auth/v1/user/oauth/grants?client_id=${client.client_id}`, {
      headers: { authorization: `Bearer ${user.accessToken}` },
    });
    expect(again.status).toBe(404);
    const bad = await call(server, 'DELETE', '/auth/v1/user/oauth/grants?client_id=nope', {
      headers: { authorization: `Bearer ${user.accessToken}` },
    });
    expect(bad.status).toBe(400);
    expect(await auditActions(client.client_id)).toContain('oauth_grant_revoked');
  });

  test('a code approved before the grant was revoked no longer redeems', async () => {
    const client = await registerClient();
    const user = await signUp(server, 'oauth-revoke-early');
    const { code, verifier } = await codeFor(client, user);
    await user.client.auth.oauth.revokeGrant({ clientId: client.client_id });
    const late = await exchange(client, code, verifier);
    expect(late.body.error).toBe('invalid_grant');

    // connecting again does not bring back a code approved before the revocation
    const older = await codeFor(client, user);
    await user.client.auth.oauth.revokeGrant({ clientId: client.client_id });
    const newer = await codeFor(client, user);
    expect((await exchange(client, older.code, older.verifier)).body.error).toBe('invalid_grant');
    expect((await exchange(client, newer.code, newer.verifier)).status).toBe(200);
  });
});

describe('what stays with the person', () => {
  test("a client's token reads the user and their data, but cannot change the account or mint API keys", async () => {
    const client = await registerClient();
    const user = await signUp(server, 'oauth-limits');
    const ws = await workspace(server, user, 'Limits Co');
    const { code, verifier } = await codeFor(client, user);
    const issued = (await exchange(client, code, verifier)).body;
    const bearer = { authorization: `Bearer ${issued.access_token}` };

    // reading is acting for the user
    const me = await call(server, 'GET', '/auth/v1/user', { headers: bearer });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(user.id);
    expect(await workspacesSeenWith(issued.access_token!)).toEqual([ws]);

    // the account itself is the person's: address, password, factors, identities, passkeys
    const refusals = await Promise.all([
      call(server, 'PUT', '/auth/v1/user', { headers: bearer, body: { password: 'taken over 12345' } }),
      call(server, 'PUT', '/auth/v1/user', { headers: bearer, body: { email: 'attacker@example.com' } }),
      call(server, 'POST', '/auth/v1/factors', { headers: bearer, body: { factor_type: 'totp' } }),
      call(server, 'GET', '/auth/v1/reauthenticate', { headers: bearer }),
      call(server, 'GET', '/auth/v1/user/identities/authorize?provider=github&skip_http_redirect=true', {
        headers: bearer,
      }),
      call(server, 'POST', '/auth/v1/logout?scope=global', { headers: bearer }),
    ]);
    for (const refused of refusals) {
      expect(refused.status).toBe(403);
      expect(refused.body.error_code).toBe('oauth_client_token');
    }
    const account = await server.pool.query<{ email: string; factors: number }>(
      `select email, (select count(*)::int from auth.mfa_factors f where f.user_id = u.id) as factors
       from auth.users u where id = $1`,
      [user.id],
    );
    expect(account.rows[0]).toEqual({ email: user.email, factors: 0 });
    const stillSignsIn = await server.client().auth.signInWithPassword({
      email: user.email,
      password: 'correct horse battery',
    });
    expect(stillSignsIn.error).toBeNull();

    // a key would outlive the grant: refused in the database, whoever calls
    const key = await server
      .clientWithToken(issued.access_token!)
      .rpc('create_api_key', { workspace_id: ws, name: 'Exfiltrate', role: 'member' });
    expect(key.error?.code).toBe('42501');
    const keys = await server.pool.query('select 1 from internal.api_keys where workspace_id = $1', [ws]);
    expect(keys.rowCount).toBe(0);
    // the person may make one
    const own = await user.client.rpc('create_api_key', { workspace_id: ws, name: 'Mine', role: 'member' });
    expect(own.error).toBeNull();

    // the client signs out of its own session only; the person's stays
    const out = await call(server, 'POST', '/auth/v1/logout?scope=local', { headers: bearer });
    expect(out.status).toBe(204);
    expect(await workspacesSeenWith(issued.access_token!)).toBe(401);
    expect((await user.client.auth.getUser()).data.user?.id).toBe(user.id);
  });
});

test('discovery: RFC 8414 metadata under /auth/v1 and at the root', async () => {
  const scoped = await call(server, 'GET', '/auth/v1/.well-known/oauth-authorization-server', {
    apikey: null,
  });
  expect(scoped.status).toBe(200);
  expect(scoped.body).toMatchObject({
    issuer: server.config.jwtIssuer,
    authorization_endpoint: expect.stringMatching(/\/auth\/v1\/oauth\/authorize$/),
    token_endpoint: expect.stringMatching(/\/auth\/v1\/oauth\/token$/),
    response_types_supported: ['code'],
    code_challenge_methods_supported: ['S256'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
  });
  for (const path of [
    '/.well-known/oauth-authorization-server',
    '/.well-known/oauth-authorization-server/auth/v1',
  ]) {
    const root = await call(server, 'GET', path, { apikey: null });
    expect(root.status).toBe(200);
    expect(root.body).toEqual(scoped.body);
  }
});

test('requests started per address are limited (the sign-in limit), refused without a redirect', async () => {
  const limited = await startTestServer({ OAUTH_SERVER_ENABLED: 'true', RATE_LIMIT_SIGNIN_PER_ADDRESS: '2' });
  try {
    const created = await limited.adminClient().auth.admin.oauth.createClient({
      client_name: 'Busy',
      redirect_uris: [REDIRECT],
    });
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: created.data!.client_id,
      redirect_uri: REDIRECT,
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    });
    const start = () => fetch(`${limited.url}/auth/v1/oauth/authorize?${query}`, { redirect: 'manual' });
    expect((await start()).status).toBe(302);
    expect((await start()).status).toBe(302);
    const third = await start();
    expect(third.status).toBe(429);
    expect(third.headers.get('location')).toBeNull();
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    const { rows } = await limited.pool.query<{ n: number }>(
      'select count(*)::int as n from auth.oauth_authorizations',
    );
    expect(rows[0]!.n).toBe(2);
  } finally {
    await limited.close();
  }
});

test('with the OAuth server off (the default) none of it is served', async () => {
  const off = await startTestServer();
  try {
    const user = await signUp(off, 'oauth-off');
    const auth = { headers: { authorization: `Bearer ${user.accessToken}` } };
    const paths: [string, string][] = [
      ['GET', '/auth/v1/oauth/authorize?client_id=x&redirect_uri=y'],
      ['POST', '/auth/v1/oauth/token'],
      ['GET', `/auth/v1/oauth/authorizations/${crypto.randomUUID()}`],
      ['POST', `/auth/v1/oauth/authorizations/${crypto.randomUUID()}/consent`],
      ['GET', '/auth/v1/user/oauth/grants'],
      ['DELETE', `/auth/v1/user/oauth/grants?client_id=${crypto.randomUUID()}`],
      ['GET', '/auth/v1/.well-known/oauth-authorization-server'],
      ['GET', '/.well-known/oauth-authorization-server'],
    ];
    for (const [method, path] of paths) {
      const answer = await call(off, method, path, auth);
      expect([method, path, answer.status]).toEqual([method, path, 404]);
    }
    const listed = await user.client.auth.oauth.listGrants();
    expect(listed.error?.status).toBe(404);
  } finally {
    await off.close();
  }
});
