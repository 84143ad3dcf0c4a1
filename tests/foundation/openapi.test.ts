// The published OpenAPI document matches the service: every documented status of the token
// grants, the webhook and the digest trigger is produced by a real request, and each real body
// satisfies the schema the document publishes for it.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { z } from 'zod';
import { schemas } from '../../src/server/openapi.js';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { envelope, sign } from '../support/stripe-events.js';

let server: TestServer;
let document: {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      { responses: Record<string, { content: { 'application/json': { schema: { $ref: string } } } }> }
    >
  >;
  components: { schemas: Record<string, unknown> };
};

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_SIGNIN_FAILURES: '1' });
  document = (await call(server, 'GET', '/api/openapi.json', { apikey: null })).body as never;
});
afterAll(async () => server?.close());

/** Checks a real response against the document: the status is documented, the body fits its schema. */
function conforms(path: string, method: string, response: { status: number; body: unknown }) {
  const documented = document.paths[path]?.[method]?.responses[String(response.status)];
  expect(documented, `${method.toUpperCase()} ${path} ${response.status} is documented`).toBeDefined();
  const name = documented!.content['application/json'].schema.$ref.split('/').pop() as keyof typeof schemas;
  const schema: z.ZodType = schemas[name];
  const parsed = schema.safeParse(response.body);
  expect(parsed.success, `${name}: ${parsed.error?.message}`).toBe(true);
  expect(document.components.schemas[name]).toBeDefined();
}

test('the document is OpenAPI 3.1 and lists the three endpoints', () => {
  expect(document.openapi).toBe('3.1.0');
  expect(Object.keys(document.paths).sort()).toEqual([
    '/api/billing/webhook',
    '/api/notifications/digest',
    '/auth/v1/token',
  ]);
});

test('token grants: 200, 400, 401, 413, 429 as documented', async () => {
  const email = `openapi-${Date.now()}@example.com`;
  await call(server, 'POST', '/auth/v1/signup', { body: { email, password: 'correct horse battery' } });
  const ok = await call(server, 'POST', '/auth/v1/token?grant_type=password', {
    body: { email, password: 'correct horse battery' },
  });
  expect(ok.status).toBe(200);
  conforms('/auth/v1/token', 'post', ok);
  const refreshed = await call(server, 'POST', '/auth/v1/token?grant_type=refresh_token', {
    body: { refresh_token: ok.body.refresh_token },
  });
  conforms('/auth/v1/token', 'post', refreshed);
  const wrong = await call(server, 'POST', '/auth/v1/token?grant_type=password', {
    body: { email, password: 'nope nope' },
  });
  expect(wrong.status).toBe(400);
  conforms('/auth/v1/token', 'post', wrong);
  const limited = await call(server, 'POST', '/auth/v1/token?grant_type=password', {
    body: { email, password: 'nope nope' },
  });
  expect(limited.status).toBe(429);
  conforms('/auth/v1/token', 'post', limited);
  const noKey = await call(server, 'POST', '/auth/v1/token?grant_type=password', { apikey: null, body: {} });
  expect(noKey.status).toBe(401);
  conforms('/auth/v1/token', 'post', noKey);
  const big = await call(server, 'POST', '/auth/v1/token?grant_type=password', {
    rawBody: 'x'.repeat(1024 * 1024 + 1),
  });
  expect(big.status).toBe(413);
  conforms('/auth/v1/token', 'post', big);
});

test('PKCE grant: 200, 400, 404, 422 as documented', async () => {
  const email = `openapi-pkce-${Date.now()}@example.com`;
  const { rows } = await server.pool.query<{ id: string }>(
    'insert into auth.users (email, email_confirmed_at) values ($1, now()) returning id',
    [email],
  );
  const verifier = 'v'.repeat(43);
  // A flow whose e-mail link was just followed (fresh) and one followed six minutes ago (stale).
  const flow = async (code: string, ageSeconds: number) =>
    server.pool.query(
      `insert into auth.flow_state (user_id, code_challenge, code_challenge_method, authentication_method,
         auth_code_hash, auth_code_issued_at)
       values ($1, $2, 'plain', 'email/signup', sha256(convert_to($3, 'UTF8')), now() - make_interval(secs => $4))`,
      [rows[0]!.id, verifier, code, ageSeconds],
    );
  const fresh = crypto.randomUUID();
  const stale = crypto.randomUUID();
  await flow(fresh, 0);
  await flow(stale, 360);
  const exchange = (auth_code: string, code_verifier = verifier) =>
    call(server, 'POST', '/auth/v1/token?grant_type=pkce', { body: { auth_code, code_verifier } });
  const bad = await exchange(fresh, 'w'.repeat(43));
  expect(bad.status).toBe(400);
  conforms('/auth/v1/token', 'post', bad);
  const ok = await exchange(fresh);
  expect(ok.status).toBe(200);
  conforms('/auth/v1/token', 'post', ok);
  const used = await exchange(fresh);
  expect(used.status).toBe(404);
  conforms('/auth/v1/token', 'post', used);
  const expired = await exchange(stale);
  expect(expired.status).toBe(422);
  conforms('/auth/v1/token', 'post', expired);
});

test('webhook: 200, 400, 401, 413 as documented', async () => {
  const body = JSON.stringify(envelope('customer.created', { id: 'cus_openapi' }));
  const post = (raw: string, signature?: string) =>
    call(server, 'POST', '/api/billing/webhook', {
      rawBody: raw,
      apikey: null,
      headers: signature ? { 'stripe-signature': signature } : {},
    });
  const ok = await post(body, sign(body, server.config.paymentWebhookSecret));
  expect(ok.status).toBe(200);
  conforms('/api/billing/webhook', 'post', ok);
  conforms('/api/billing/webhook', 'post', await post(body));
  conforms('/api/billing/webhook', 'post', await post(body, sign(body, 'whsec_wrong_secret_value')));
  const big = 'x'.repeat(1024 * 1024 + 1);
  conforms('/api/billing/webhook', 'post', await post(big, sign(big, server.config.paymentWebhookSecret)));
});

test('digest trigger: 200, 400, 401 as documented, over POST and GET', async () => {
  for (const method of ['post', 'get'] as const) {
    const trigger = (query: string, secret: string | null) =>
      call(server, method.toUpperCase(), `/api/notifications/digest${query}`, {
        apikey: null,
        headers: secret ? { authorization: `Bearer ${secret}` } : {},
      });
    const ok = await trigger('?frequency=daily', server.config.cronSecret);
    expect(ok.status).toBe(200);
    conforms('/api/notifications/digest', method, ok);
    conforms(
      '/api/notifications/digest',
      method,
      await trigger('?frequency=hourly', server.config.cronSecret),
    );
    conforms('/api/notifications/digest', method, await trigger('?frequency=daily', null));
  }
});
