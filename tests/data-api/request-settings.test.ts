// What SQL may read of the request, as PostgREST offers it: request.headers (a JSON object, names
// in lower case, Cookie left out), request.cookies, request.method and request.path, on GET and
// POST through supabase-js's own calls; a trace header sent by the client reaches a function.
import { createClient } from '@supabase/supabase-js';
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import ws from 'ws';
import { createTestDatabase, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  const url = await createTestDatabase();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`
    create function public.request_seen() returns jsonb language sql stable as $$
      select jsonb_build_object(
        'headers', nullif(current_setting('request.headers', true), '')::jsonb,
        'cookies', nullif(current_setting('request.cookies', true), '')::jsonb,
        'method', current_setting('request.method', true),
        'path', current_setting('request.path', true))
    $$;
    grant execute on function public.request_seen() to anon, authenticated;`);
  await client.end();
  server = await startTestServer({ DATABASE_URL: url });
});
afterAll(async () => server?.close());

interface Seen {
  headers: Record<string, string>;
  cookies: Record<string, string>;
  method: string;
  path: string;
}

test('a function reads the request headers, cookies, method and path', async () => {
  const supabase = createClient(server.url, server.config.projectApiKey, {
    auth: { persistSession: false },
    realtime: { transport: ws as never },
    global: {
      headers: {
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        'X-Client-Thing': 'Mixed Case Value',
        cookie: 'theme=dark; session=not-for-sql',
      },
    },
  });
  const posted = await supabase.rpc('request_seen');
  expect(posted.error).toBeNull();
  const seen = posted.data as Seen;
  expect(seen.headers.traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
  expect(seen.headers['x-client-thing']).toBe('Mixed Case Value');
  expect(seen.headers.apikey).toBe(server.config.projectApiKey);
  expect(seen.headers).not.toHaveProperty('cookie');
  expect(seen.cookies).toEqual({ theme: 'dark', session: 'not-for-sql' });
  expect(seen.method).toBe('POST');
  // The path as PostgREST sees it behind the gateway: without /rest/v1.
  expect(seen.path).toBe('/rpc/request_seen');

  const got = await supabase.rpc('request_seen', {}, { get: true });
  expect(got.error).toBeNull();
  expect((got.data as Seen).method).toBe('GET');
});
