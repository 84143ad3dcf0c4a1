// PKCE for e-mail links as @supabase/ssr uses it: a server-side client (cookie jar, flowType
// pkce) signs up, the e-mail link (read from a real SMTP server) lands on the app's callback with
// ?code=, and exchangeCodeForSession turns it into a session. The code works once, with the
// right verifier, within five minutes; GoTrue's errors otherwise. A PKCE link's token_hash never
// yields a session through POST /verify: only its browser, through the exchange, signs in.
import { createHash, randomBytes } from 'node:crypto';
import { createServerClient } from '@supabase/ssr';
import ws from 'ws';
import { describe, expect, test } from 'vitest';
import {
  allowAnotherEmail,
  followVerifyLink,
  serveWithMailbox,
  type AuthMailbox,
} from '../support/auth-mail.js';
import { call, type TestServer } from '../support/server.js';

let server: TestServer;
let mailbox: AuthMailbox;
const CALLBACK = 'https://app.example.com/auth/callback';

serveWithMailbox({}, (started, mail) => {
  server = started;
  mailbox = mail;
});

let counter = 0;
const uniqueEmail = () => `pkce${++counter}-${Date.now()}@example.com`;
const PASSWORD = 'correct horse battery';
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());

function ssrClient() {
  const jar = new Map<string, string>();
  const client = createServerClient(server.url, server.config.projectApiKey, {
    cookies: {
      getAll: () => [...jar].map(([name, value]) => ({ name, value })),
      setAll: (cookies) => {
        for (const { name, value } of cookies) {
          if (value) jar.set(name, value);
          else jar.delete(name);
        }
      },
    },
    realtime: { transport: ws as unknown as typeof WebSocket },
  });
  return { client, jar };
}

const follow = (link: string) => followVerifyLink(server, link);

test('@supabase/ssr: signUp, the e-mail link lands with ?code=, exchangeCodeForSession signs in', async () => {
  const email = uniqueEmail();
  const { client, jar } = ssrClient();
  const { data, error } = await client.auth.signUp({
    email,
    password: PASSWORD,
    options: { emailRedirectTo: CALLBACK },
  });
  expect(error).toBeNull();
  expect(data.session).toBeNull();
  expect([...jar.keys()].some((name) => name.endsWith('-code-verifier'))).toBe(true);

  const mail = await mailbox.latest(email);
  expect(new URL(mail.link!).searchParams.get('token')).toMatch(/^pkce_[0-9a-f]{56}$/);
  const landing = await follow(mail.link!);
  expect(`${landing.origin}${landing.pathname}`).toBe(CALLBACK);
  expect(landing.hash).toBe('');
  const code = landing.searchParams.get('code')!;
  expect(code).toMatch(/^[0-9a-f-]{36}$/);

  const exchanged = await client.auth.exchangeCodeForSession(code);
  expect(exchanged.error).toBeNull();
  expect(exchanged.data.user?.email).toBe(email);
  expect(exchanged.data.user?.email_confirmed_at).toBeTruthy();
  expect(claimsOf(exchanged.data.session!.access_token).amr[0].method).toBe('email/signup');
  const me = await client.auth.getUser();
  expect(me.data.user?.email).toBe(email);
  expect([...jar.keys()].some((name) => /-auth-token(\.0)?$/.test(name))).toBe(true);

  // The flow is gone: the same link now fails, PKCE-style (query and fragment).
  const again = await follow(mail.link!);
  expect(again.searchParams.get('error')).toBe('access_denied');
  expect(again.searchParams.get('error_code')).toBe('otp_expired');
  expect(again.searchParams.get('error_description')).toBe('Email link is invalid or has expired');
  expect(again.searchParams.get('code')).toBeNull();
  expect(new URLSearchParams(again.hash.slice(1)).get('error_code')).toBe('otp_expired');
});

test('@supabase/ssr: resend with PKCE mails a pkce_ link whose code exchanges', async () => {
  const email = uniqueEmail();
  const { client } = ssrClient();
  await client.auth.signUp({ email, password: PASSWORD, options: { emailRedirectTo: CALLBACK } });
  await server.pool.query(`update internal.mail_frequency set sent_at = now() - interval '61 seconds'`);
  const { error } = await client.auth.resend({
    type: 'signup',
    email,
    options: { emailRedirectTo: CALLBACK },
  });
  expect(error).toBeNull();
  const mails = await mailbox.mailsTo(email);
  expect(mails).toHaveLength(2);
  const code = (await follow(mails[1]!.link!)).searchParams.get('code')!;
  const exchanged = await client.auth.exchangeCodeForSession(code);
  expect(exchanged.error).toBeNull();
  expect(exchanged.data.session?.user.email).toBe(email);
});

describe('the exchange over HTTP', () => {
  const verifier = () => randomBytes(32).toString('base64url');
  const challengeOf = (v: string) => createHash('sha256').update(v).digest('base64url');

  async function codeFor(v: string, method: 's256' | 'plain' = 's256') {
    const email = uniqueEmail();
    const res = await call(server, 'POST', `/auth/v1/signup?redirect_to=${encodeURIComponent(CALLBACK)}`, {
      body: {
        email,
        password: PASSWORD,
        code_challenge: method === 's256' ? challengeOf(v) : v,
        code_challenge_method: method,
      },
    });
    expect(res.status).toBe(200);
    const mail = await mailbox.latest(email);
    return { email, mail, code: (await follow(mail.link!)).searchParams.get('code')! };
  }
  const exchange = (auth_code: string, code_verifier: string) =>
    call(server, 'POST', '/auth/v1/token?grant_type=pkce', { body: { auth_code, code_verifier } });

  test('a mismatched verifier is 400 bad_code_verifier and leaves the code usable; a used code is 404', async () => {
    const v = verifier();
    const { email, code } = await codeFor(v);
    for (const wrong of [verifier(), challengeOf(v), `${v}x`, v.slice(1)]) {
      const res = await exchange(code, wrong);
      expect(res.status).toBe(400);
      expect(res.body.error_code).toBe('bad_code_verifier');
      expect(res.body.msg).toBe('code challenge does not match previously saved code verifier');
    }
    const ok = await exchange(code, v);
    expect(ok.status).toBe(200);
    expect((ok.body.user as { email: string }).email).toBe(email);
    const reused = await exchange(code, v);
    expect(reused.status).toBe(404);
    expect(reused.body.error_code).toBe('flow_state_not_found');
    expect(reused.body.msg).toBe('invalid flow state, no valid flow state found');
  });

  test('the plain method works too', async () => {
    const v = verifier();
    const { code } = await codeFor(v, 'plain');
    expect((await exchange(code, v)).status).toBe(200);
  });

  test('a code not exchanged within five minutes has expired (422 flow_state_expired)', async () => {
    const v = verifier();
    const { email, code } = await codeFor(v);
    await server.pool.query(
      `update auth.flow_state set auth_code_issued_at = now() - interval '301 seconds'
       where user_id = (select id from auth.users where email = $1)`,
      [email],
    );
    const res = await exchange(code, v);
    expect(res.status).toBe(422);
    expect(res.body.error_code).toBe('flow_state_expired');
  });

  test('unknown codes, empty fields and bad challenges', async () => {
    expect((await exchange(crypto.randomUUID(), verifier())).body.error_code).toBe('flow_state_not_found');
    const empty = await exchange('', verifier());
    expect(empty.status).toBe(400);
    expect(empty.body.msg).toBe('invalid request: both auth code and code verifier should be non-empty');
    const noVerifier = await call(server, 'POST', '/auth/v1/token?grant_type=pkce', {
      body: { auth_code: 'x' },
    });
    expect(noVerifier.body.error_code).toBe('validation_failed');
    for (const [body, message] of [
      [
        { code_challenge: 'short', code_challenge_method: 's256' },
        'code challenge has to be between 43 and 128 characters',
      ],
      [
        { code_challenge: challengeOf(verifier()) },
        'PKCE flow requires code_challenge_method and code_challenge',
      ],
      [
        { code_challenge: challengeOf(verifier()), code_challenge_method: 'md5' },
        'unsupported code_challenge method "md5": use s256 or plain',
      ],
    ] as const) {
      const res = await call(server, 'POST', '/auth/v1/signup', {
        body: { email: uniqueEmail(), password: PASSWORD, ...body },
      });
      expect({ status: res.status, msg: res.body.msg }).toEqual({ status: 400, msg: message });
    }
  });

  test("a PKCE link's token_hash never signs in through POST /verify: refused, not spent, its link and code still work", async () => {
    const v = verifier();
    const email = uniqueEmail();
    await call(server, 'POST', `/auth/v1/signup?redirect_to=${encodeURIComponent(CALLBACK)}`, {
      body: { email, password: PASSWORD, code_challenge: challengeOf(v), code_challenge_method: 's256' },
    });
    const signup = await mailbox.latest(email);
    const signupHash = new URL(signup.link!).searchParams.get('token')!;
    const refused = await server.client().auth.verifyOtp({ token_hash: signupHash, type: 'signup' });
    expect(refused.error?.status).toBe(400);
    expect(refused.error?.code).toBe('bad_code_verifier');
    expect(refused.data.session).toBeNull();
    // Still the initiator's: the link gives a code that only the verifier exchanges.
    const code = (await follow(signup.link!)).searchParams.get('code')!;
    expect((await exchange(code, v)).status).toBe(200);

    // Every kind of e-mail link: a recovery link (a session that may set the password) and a
    // magic link, asked for by a PKCE client, are refused the same way.
    for (const [path, type] of [
      ['/auth/v1/recover', 'recovery'],
      ['/auth/v1/otp', 'magiclink'],
    ] as const) {
      await allowAnotherEmail(server);
      const asked = await call(server, 'POST', `${path}?redirect_to=${encodeURIComponent(CALLBACK)}`, {
        body: { email, code_challenge: challengeOf(v), code_challenge_method: 's256' },
      });
      expect(asked.status).toBe(200);
      const mail = await mailbox.latest(email);
      const tokenHash = new URL(mail.link!).searchParams.get('token')!;
      expect(tokenHash).toMatch(/^pkce_/);
      const res = await call(server, 'POST', '/auth/v1/verify', { body: { type, token_hash: tokenHash } });
      expect({ type, status: res.status, code: res.body.error_code }).toEqual({
        type,
        status: 400,
        code: 'bad_code_verifier',
      });
      expect(res.body.access_token).toBeUndefined();
      // The person who typed the e-mail's code into the app still signs in (verifyOtp with email).
      const typed = await server.client().auth.verifyOtp({ email, token: mail.code!, type: 'email' });
      expect(typed.error).toBeNull();
      expect(typed.data.session?.user.email).toBe(email);
    }
  });
});
