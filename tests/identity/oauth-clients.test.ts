// The OAuth 2.1 server's client administration (/admin/oauth/clients) through supabase-js's
// auth.admin.oauth: service role only, the secret shown on creation and regeneration and stored
// only as a digest, GoTrue's validation of redirect URIs and client types, bad input changing
// nothing, an audit line for each change, and the whole API absent while the server is off.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ OAUTH_SERVER_ENABLED: 'true', OAUTH_SERVER_MAX_REDIRECT_URIS: '3' });
});
afterAll(async () => server?.close());

const service = () => ({ authorization: `Bearer ${server.config.serviceRoleKey}` });
const oauth = () => server.adminClient().auth.admin.oauth;

async function clientCount(): Promise<number> {
  const { rows } = await server.pool.query<{ n: number }>(
    'select count(*)::int as n from auth.oauth_clients',
  );
  return rows[0]!.n;
}

async function auditActions(clientId: string): Promise<string[]> {
  const { rows } = await server.pool.query<{ action: string; actor_type: string }>(
    `select action, actor_type from public.audit_events
      where target_type = 'oauth_client' and target_id = $1 order by id`,
    [clientId],
  );
  for (const row of rows) expect(row.actor_type).toBe('service');
  return rows.map((r) => r.action);
}

test('a confidential client: created with its secret once, read, changed, re-keyed and deleted', async () => {
  const created = await oauth().createClient({
    client_name: 'Reports',
    redirect_uris: ['https://reports.example.com/callback', 'http://localhost:8080/cb'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  });
  expect(created.error).toBeNull();
  const client = created.data!;
  expect(client).toMatchObject({
    client_name: 'Reports',
    client_type: 'confidential',
    token_endpoint_auth_method: 'client_secret_basic',
    registration_type: 'manual',
    redirect_uris: ['https://reports.example.com/callback', 'http://localhost:8080/cb'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  });
  expect(client.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);

  // kept only as its SHA-256 digest
  const stored = await server.pool.query<{ client_secret_hash: Buffer }>(
    'select client_secret_hash from auth.oauth_clients where id = $1',
    [client.client_id],
  );
  const digest = createHash('sha256').update(client.client_secret!).digest();
  expect(stored.rows[0]!.client_secret_hash.equals(digest)).toBe(true);

  const read = await oauth().getClient(client.client_id);
  expect(read.error).toBeNull();
  expect(read.data?.client_id).toBe(client.client_id);
  expect(read.data).not.toHaveProperty('client_secret');

  const updated = await oauth().updateClient(client.client_id, {
    logo_uri: 'https://reports.example.com/logo.png',
  });
  expect(updated.error).toBeNull();
  expect(updated.data).toMatchObject({
    client_name: 'Reports',
    logo_uri: 'https://reports.example.com/logo.png',
  });
  expect(updated.data).not.toHaveProperty('client_secret');

  const rekeyed = await oauth().regenerateClientSecret(client.client_id);
  expect(rekeyed.error).toBeNull();
  expect(rekeyed.data?.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(rekeyed.data?.client_secret).not.toBe(client.client_secret);

  const deleted = await oauth().deleteClient(client.client_id);
  expect(deleted.error).toBeNull();
  const gone = await oauth().getClient(client.client_id);
  expect(gone.data).toBeNull();
  expect(gone.error?.status).toBe(404);
  expect((gone.error as { code?: string } | null)?.code).toBe('oauth_client_not_found');
  const again = await call(server, 'DELETE', `/auth/v1/admin/oauth/clients/${client.client_id}`, {
    headers: service(),
  });
  expect(again.status).toBe(404);
  const rekeyGone = await oauth().regenerateClientSecret(client.client_id);
  expect(rekeyGone.error?.status).toBe(404);

  expect(await auditActions(client.client_id)).toEqual([
    'oauth_client_created',
    'oauth_client_updated',
    'oauth_client_secret_regenerated',
    'oauth_client_deleted',
  ]);
});

test('a public client has no secret, and none can be regenerated for it', async () => {
  const { data, error } = await oauth().createClient({
    client_name: 'Mobile',
    redirect_uris: ['https://mobile.example.com/cb'],
    token_endpoint_auth_method: 'none',
  });
  expect(error).toBeNull();
  expect(data).toMatchObject({ client_type: 'public', token_endpoint_auth_method: 'none' });
  expect(data).not.toHaveProperty('client_secret');
  const rekey = await oauth().regenerateClientSecret(data!.client_id);
  expect(rekey.error?.status).toBe(400);
  expect(rekey.error?.message).toBe('Cannot regenerate secret for public client');
  expect(await auditActions(data!.client_id)).toEqual(['oauth_client_created']);
});

test('listClients() pages with GoTrue headers and leaves out deleted clients', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const { data } = await oauth().createClient({
      client_name: `Paged ${i}`,
      redirect_uris: ['https://p.example.com/cb'],
    });
    ids.push(data!.client_id);
  }
  await oauth().deleteClient(ids[0]!);
  const all = await oauth().listClients({ page: 1, perPage: 1000 });
  expect(all.error).toBeNull();
  const listed = all.data.clients.map((c) => c.client_id);
  expect(listed).toContain(ids[1]);
  expect(listed).toContain(ids[2]);
  expect(listed).not.toContain(ids[0]);
  for (const c of all.data.clients) expect(c).not.toHaveProperty('client_secret');

  const page = await oauth().listClients({ page: 1, perPage: 2 });
  expect(page.error).toBeNull();
  expect(page.data.clients).toHaveLength(2);
  expect(page.data).toMatchObject({ total: all.data.clients.length, nextPage: 2 });

  const raw = await call(server, 'GET', '/auth/v1/admin/oauth/clients?page=&per_page=', {
    headers: service(),
  });
  expect(raw.status).toBe(200);
  expect(raw.headers.get('x-total-count')).toBe(String(all.data.clients.length));
});

describe('bad input is refused in GoTrue words and changes nothing', () => {
  const refusals: [string, Record<string, unknown>, RegExp][] = [
    ['no redirect URI', { client_name: 'x', redirect_uris: [] }, /^redirect_uris is required$/],
    [
      'more redirect URIs than allowed',
      {
        redirect_uris: [
          'https://a.example/1',
          'https://a.example/2',
          'https://a.example/3',
          'https://a.example/4',
        ],
      },
      /cannot exceed 3 items/,
    ],
    [
      'plain HTTP to another host',
      { redirect_uris: ['http://evil.example.com/cb'] },
      /HTTP scheme only allowed for localhost/,
    ],
    ['a fragment', { redirect_uris: ['https://a.example.com/cb#x'] }, /fragment not allowed/],
    ['a custom scheme', { redirect_uris: ['myapp://callback'] }, /scheme must be HTTPS or HTTP/],
    ['not a URL', { redirect_uris: ['callback'] }, /invalid URL format/],
    [
      'an unknown grant',
      { redirect_uris: ['https://a.example.com/cb'], grant_types: ['password'] },
      /grant_types must only contain/,
    ],
    [
      'a response type other than code',
      { redirect_uris: ['https://a.example.com/cb'], response_types: ['token'] },
      /response_types must only contain 'code'/,
    ],
    [
      'a public client with a secret method',
      {
        redirect_uris: ['https://a.example.com/cb'],
        client_type: 'public',
        token_endpoint_auth_method: 'client_secret_post',
      },
      /public clients must use/,
    ],
    [
      'a confidential client without one',
      {
        redirect_uris: ['https://a.example.com/cb'],
        client_type: 'confidential',
        token_endpoint_auth_method: 'none',
      },
      /confidential clients cannot use/,
    ],
    [
      'an unknown method',
      { redirect_uris: ['https://a.example.com/cb'], token_endpoint_auth_method: 'private_key_jwt' },
      /token_endpoint_auth_method must be one of/,
    ],
    [
      'a script logo',
      { redirect_uris: ['https://a.example.com/cb'], logo_uri: 'javascript:alert(1)' },
      /logo_uri must be a valid URL/,
    ],
    [
      'a name too long',
      { redirect_uris: ['https://a.example.com/cb'], client_name: 'n'.repeat(1025) },
      /client_name cannot exceed 1024/,
    ],
    ['a list that is not one', { redirect_uris: 'https://a.example.com/cb' }, /redirect_uris/],
  ];
  test.each(refusals)('create with %s', async (_, body, message) => {
    const before = await clientCount();
    const res = await call(server, 'POST', '/auth/v1/admin/oauth/clients', { body, headers: service() });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error_code: 'validation_failed' });
    expect(String(res.body.msg)).toMatch(message);
    expect(await clientCount()).toBe(before);
  });

  test('supabase-js reports a refused creation as an AuthError', async () => {
    const { data, error } = await oauth().createClient({ client_name: 'Invalid', redirect_uris: [] });
    expect(data).toBeNull();
    expect(error?.message).toBe('redirect_uris is required');
  });

  test('updates: nothing to change, bad URIs, a method of the other type', async () => {
    const { data } = await oauth().createClient({
      client_name: 'Stable',
      redirect_uris: ['https://s.example.com/cb'],
    });
    const id = data!.client_id;
    const path = `/auth/v1/admin/oauth/clients/${id}`;
    for (const [body, message] of [
      [{}, /^No fields provided for update$/],
      [{ redirect_uris: [] }, /redirect_uris cannot be empty/],
      [{ redirect_uris: ['ftp://s.example.com'] }, /scheme must be HTTPS/],
      [{ token_endpoint_auth_method: 'none' }, /confidential clients cannot use/],
      [{ client_uri: 'not a url' }, /client_uri must be a valid URL/],
    ] as const) {
      const res = await call(server, 'PUT', path, { body, headers: service() });
      expect(res.status).toBe(400);
      expect(String(res.body.msg)).toMatch(message);
    }
    const after = await oauth().getClient(id);
    expect(after.data).toMatchObject({
      client_name: 'Stable',
      redirect_uris: ['https://s.example.com/cb'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    expect(after.data?.updated_at).toBe(data!.updated_at);
    expect(await auditActions(id)).toEqual(['oauth_client_created']);

    const post = await oauth().updateClient(id, {
      token_endpoint_auth_method: 'client_secret_post',
      client_uri: 'https://s.example.com',
    });
    expect(post.error).toBeNull();
    expect(post.data).toMatchObject({
      token_endpoint_auth_method: 'client_secret_post',
      client_uri: 'https://s.example.com',
    });
  });

  test('a client id that is not a UUID is 400; an unknown one 404', async () => {
    const bad = await call(server, 'GET', '/auth/v1/admin/oauth/clients/not-a-uuid', { headers: service() });
    expect(bad.status).toBe(400);
    expect(bad.body.msg).toBe('invalid client_id format');
    const unknown = await oauth().getClient('00000000-0000-0000-0000-000000000000');
    expect(unknown.data).toBeNull();
    expect(unknown.error?.status).toBe(404);
  });
});

test('only the service role administers clients', async () => {
  const before = await clientCount();
  const anon = await call(server, 'POST', '/auth/v1/admin/oauth/clients', {
    body: { redirect_uris: ['https://a.example.com/cb'] },
  });
  expect(anon.status).toBe(403);
  const { data: session } = await server
    .client()
    .auth.signUp({ email: 'oauth-user@example.com', password: 'long enough password' });
  const asUser = await call(server, 'GET', '/auth/v1/admin/oauth/clients', {
    headers: { authorization: `Bearer ${session.session!.access_token}` },
  });
  expect(asUser.status).toBe(403);
  expect(asUser.body.error_code).toBe('not_admin');
  expect(await clientCount()).toBe(before);
});

test('with the OAuth server off (the default) the client API is not served', async () => {
  const off = await startTestServer();
  try {
    const { data, error } = await off.adminClient().auth.admin.oauth.createClient({
      client_name: 'x',
      redirect_uris: ['https://a.example.com/cb'],
    });
    expect(data).toBeNull();
    expect(error?.status).toBe(404);
    const list = await call(off, 'GET', '/auth/v1/admin/oauth/clients', {
      headers: { authorization: `Bearer ${off.config.serviceRoleKey}` },
    });
    expect(list.status).toBe(404);
    const { rows } = await off.pool.query<{ n: number }>('select count(*)::int as n from auth.oauth_clients');
    expect(rows[0]!.n).toBe(0);
  } finally {
    await off.close();
  }
});
