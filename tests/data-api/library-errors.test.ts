// The data API's refusals on a schema the test creates itself: keys and tokens, permissions,
// what is exposed, malformed and hostile queries (always a clean 4xx, never a 500 or foreign
// data), body limits, and internal failures that must not leak their message.
import { SignJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startLibrary, type Library, type User } from './library.js';

let lib: Library;
let user: User;

const EXTRA_SQL = `
create function public.crash() returns void
  language plpgsql as $$ begin raise sqlstate 'XX000' using message = 'secret internal detail'; end $$;
create function public.custom_refusal() returns void language plpgsql as $$ begin
  raise sqlstate 'PGRST' using
    message = '{"code":"quota_exceeded","message":"Your plan allows 3 projects","details":"3 of 3 used","hint":"Upgrade"}',
    detail = '{"status":402,"headers":{"X-Plan":"free","Bad Header":"x"}}';
end $$;
create function public.broken_refusal() returns void language plpgsql as $$ begin
  raise sqlstate 'PGRST' using message = 'not json', detail = 'nope';
end $$;
create table public.recursive (id integer primary key);
alter table public.recursive enable row level security;
create policy loop on public.recursive using (exists (select 1 from public.recursive));
grant select on public.recursive to anon, authenticated;
`;

beforeAll(async () => {
  lib = await startLibrary(EXTRA_SQL);
  user = await lib.signUp('errors');
  await lib.admin.query(`insert into public.authors (name, owner_id) values ('Known', $1)`, [user.id]);
});
afterAll(async () => lib?.close());

const body = (res: { json: unknown }) =>
  res.json as { code: string; message: string; details: unknown; hint: unknown };

describe('keys and tokens', () => {
  test('no apikey, or an unknown one: 401', async () => {
    const none = await fetch(`${lib.server.url}/rest/v1/authors`);
    expect(none.status).toBe(401);
    const wrong = await lib.rest('/authors', { headers: { apikey: 'anon_not-the-real-key-000000000000' } });
    expect(wrong.status).toBe(401);
    expect(body(wrong)).toMatchObject({ code: expect.any(String), message: expect.any(String) });
  });

  test('a forged, malformed or empty bearer: 401 PGRST301 with WWW-Authenticate', async () => {
    const claims = decodeJwt(user.token);
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('x'.repeat(40)));
    const unsigned = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;
    for (const token of [forged, unsigned, 'not.a.jwt', 'garbage']) {
      const res = await lib.rest('/authors', { token });
      expect(res.status, token).toBe(401);
      expect(body(res).code).toBe('PGRST301');
      expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
    const empty = await lib.rest('/authors', { headers: { authorization: 'Bearer ' } });
    expect(empty.status).toBe(401);
  });

  test('an expired token: 401 PGRST303 "JWT expired"', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ ...decodeJwt(user.token), iat: now - 7200, exp: now - 60 })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(lib.server.config.jwtSecret));
    const res = await lib.rest('/authors', { token: expired });
    expect(res.status).toBe(401);
    expect(body(res)).toMatchObject({ code: 'PGRST303', message: 'JWT expired' });
    expect(res.headers.get('www-authenticate')).toContain('invalid_token');
  });

  test('a token cannot pick a database role outside the API roles', async () => {
    // service_role and supabase_admin signed by our key are admins (decision 0026); any other
    // role, however it is signed, is refused rather than switched to.
    const escalated = await new SignJWT({ ...decodeJwt(user.token), role: 'postgres' })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(lib.server.config.jwtSecret));
    const res = await lib.rest('/secrets', { token: escalated });
    expect(res.status).toBe(401);
  });
});

describe('permissions', () => {
  test('no privilege: 403 42501 for a signed-in user, 401 with WWW-Authenticate for anon', async () => {
    const signedIn = await user.client.from('secrets').select();
    expect(signedIn.status).toBe(403);
    expect(signedIn.error?.code).toBe('42501');
    const anon = await lib.rest('/secrets');
    expect(anon.status).toBe(401);
    expect(body(anon).code).toBe('42501');
    expect(anon.headers.get('www-authenticate')).toContain('Bearer');
    const notes = await lib.server.client().from('notes').insert({ body: 'x' });
    expect(notes.status).toBe(401);
  });

  test('the service-role key bypasses RLS', async () => {
    const res = await lib.server.adminClient().from('secrets').select();
    expect(res).toMatchObject({ status: 200, data: [], error: null });
  });
});

describe('what is exposed', () => {
  test('unknown tables, other schemas and internal tables: 404 PGRST205', async () => {
    for (const path of [
      '/nope',
      '/hidden',
      '/private.hidden',
      '/users',
      '/auth.users',
      '/schema_migrations',
      '/pg_class',
      '/pg_catalog.pg_class',
    ]) {
      const res = await lib.rest(path, { token: user.token });
      expect(res.status, path).toBe(404);
      expect(body(res).code, path).toBe('PGRST205');
    }
  });

  test('Accept-Profile naming another schema: 406 PGRST106; public is fine', async () => {
    for (const profile of ['private', 'auth', 'internal', 'pg_catalog']) {
      const res = await lib.rest('/hidden', { headers: { 'accept-profile': profile } });
      expect(res.status, profile).toBe(406);
      expect(body(res).code).toBe('PGRST106');
    }
    const ok = await lib.rest('/authors?select=name', { headers: { 'accept-profile': 'public' } });
    expect(ok.status).toBe(200);
  });

  test('unknown columns, relationships and paths', async () => {
    const column = await lib.rest('/authors?select=name,password');
    expect(column.status).toBe(400);
    expect(body(column)).toMatchObject({ code: '42703', message: 'column authors.password does not exist' });
    const filter = await lib.rest('/authors?password=eq.x');
    expect(filter.status).toBe(400);
    const order = await lib.rest('/authors?order=password');
    expect(order.status).toBe(400);
    const rel = await lib.rest('/authors?select=name,notes(body)');
    expect(rel.status).toBe(400);
    expect(body(rel).code).toBe('PGRST200');
    const internal = await lib.rest('/authors?select=name,hidden(*)');
    expect(internal.status).toBe(400);
    const deeper = await lib.rest('/rpc/add/extra');
    expect(deeper.status).toBe(404);
    // The root is the OpenAPI description, and it lists no table the role cannot see.
    const root = await lib.rest('/');
    expect(root.status).toBe(200);
    expect(Object.keys((body(root) as unknown as { definitions: object }).definitions)).not.toContain(
      'hidden',
    );
  });

  test('methods that are not supported: 405', async () => {
    const res = await lib.rest('/authors', { method: 'PUT', body: '{}' });
    expect(res.status).toBe(405);
  });
});

describe('malformed and hostile queries are clean 4xx answers', () => {
  const cases: [string, string][] = [
    ['unknown operator', '/authors?name=regex.x'],
    ['operator without value separator', '/authors?name=eq'],
    ['no operator', '/authors?name=Known'],
    ['not without operator', '/authors?name=not.Known'],
    ['semicolon in column', '/authors?name;drop%20table%20authors=eq.1'],
    ['quote in column', '/authors?na%22me=eq.1'],
    ['sql in select', '/authors?select=name,(select%201)'],
    ['comment in select', '/authors?select=name--'],
    ['unterminated quoted column', '/authors?select=%22name'],
    ['semicolon in order', '/authors?order=name;drop%20table%20authors'],
    ['order modifier', '/authors?order=name.sideways'],
    ['order with expression', '/authors?order=length(name)'],
    ['unbalanced or', '/authors?or=(name.eq.a,name.eq.b'],
    ['extra closing parenthesis', '/authors?or=(name.eq.a))'],
    ['empty or', '/authors?or=()'],
    ['or without parentheses', '/authors?or=name.eq.a'],
    ['bad item in or', '/authors?or=(name)'],
    ['unknown op in or', '/authors?or=(name.regex.a)'],
    ['deep nesting', `/authors?or=${'or('.repeat(40)}name.eq.a${')'.repeat(40)}`],
    ['bad is', '/authors?country=is.maybe'],
    ['in without list', '/authors?name=in.a,b'],
    ['in unterminated quote', '/authors?name=in.(%22a,b)'],
    ['unsupported cast', '/authors?select=name::regclass'],
    ['cast with injection', '/authors?select=name::text;select'],
    ['cast in filter', '/authors?name::text=eq.x'],
    ['bad limit', '/authors?limit=-1'],
    ['huge limit', '/authors?limit=99999999999999999999'],
    ['bad offset', '/authors?offset=ten'],
    ['empty select item', '/authors?select=name,,id'],
    ['embed without parentheses end', '/authors?select=books!author_id(title'],
    ['embed with bad hint', '/authors?select=books!a;b(title)'],
    ['wrong type value', '/authors?id=eq.abc'],
    ['wrong type in list', '/authors?id=in.(1,abc)'],
    ['bad boolean', '/books?published=eq.perhaps'],
    ['embedded filter on something not embedded', '/books?authors.name=eq.x'],
    ['two-level filter path', '/books?a.b.c=eq.x'],
    ['too many embed levels', '/reviews?select=books(authors!author_id(books!author_id(reviews(books(*)))))'],
  ];
  test.each(cases)('%s', async (_label, path) => {
    const res = await lib.rest(path, { token: user.token });
    expect(res.status).toBe(400);
    expect(body(res)).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    expect(res.json).toHaveProperty('details');
    expect(res.json).toHaveProperty('hint');
  });

  test('grammar errors are PGRST100 and say what is wrong', async () => {
    const op = await lib.rest('/authors?name=regex.x');
    expect(body(op)).toMatchObject({ code: 'PGRST100', message: expect.stringContaining('regex') });
    const paren = await lib.rest('/authors?or=(name.eq.a');
    expect(body(paren)).toMatchObject({ code: 'PGRST100', message: expect.stringMatching(/parenthes/i) });
    const quote = await lib.rest('/authors?or=(name.eq."a)');
    expect(body(quote)).toMatchObject({ code: 'PGRST100', message: expect.stringMatching(/quote/i) });
  });

  test('values are only ever data', async () => {
    const hostile = [
      '1;drop table authors',
      "x' or '1'='1",
      'x") or true --',
      '$1',
      '\\x00',
      'a"b',
      '%',
      '名前',
      '\u0000'.replace('\u0000', ''),
    ];
    for (const value of hostile) {
      const res = await lib.rest(`/authors?select=name&name=eq.${encodeURIComponent(value)}`);
      expect(res.status, value).toBe(200);
      expect(res.json, value).toEqual([]);
      const inList = await lib.rest(
        `/authors?select=name&name=in.(${encodeURIComponent(`"${value.replace(/["\\]/g, '\\$&')}"`)})`,
      );
      expect(inList.status, value).toBe(200);
      expect(inList.json, value).toEqual([]);
    }
    const nul = await lib.rest(`/authors?select=name&name=eq.a%00b`);
    expect(nul.status).toBe(400);
    expect((await lib.admin.query(`select count(*)::int as n from public.authors`)).rows[0].n).toBe(1);
    expect((await lib.admin.query(`select count(*)::int as n from private.hidden`)).rows[0].n).toBe(1);
  });

  test('long values are fine; an oversized URL is refused before any SQL', async () => {
    const long = await lib.rest(`/authors?name=eq.${'x'.repeat(8000)}`);
    expect(long.status).toBe(200);
    const huge = await lib.rest(`/authors?name=eq.${'x'.repeat(70_000)}`);
    expect(huge.status).toBeGreaterThanOrEqual(400);
    expect(huge.status).toBeLessThan(500);
  });

  test('malformed percent-encoding in the path is a 4xx', async () => {
    const res = await lib.rest('/%E0%A4%A');
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    const rpc = await lib.rest('/rpc/%E0%A4%A', { method: 'POST', body: '{}' });
    expect(rpc.status).toBeGreaterThanOrEqual(400);
    expect(rpc.status).toBeLessThan(500);
  });
});

describe('bodies', () => {
  test('malformed JSON: 400 PGRST102', async () => {
    for (const raw of ['{"name": ', '{name: 1}', "{'a':1}", '\u0000', 'nul']) {
      const res = await lib.rest('/authors', { method: 'POST', token: user.token, body: raw });
      expect(res.status, raw).toBe(400);
      expect(body(res).code, raw).toBe('PGRST102');
    }
    const rpc = await lib.rest('/rpc/add', { method: 'POST', body: '{"a":' });
    expect(rpc.status).toBe(400);
    expect(body(rpc).code).toBe('PGRST102');
  });

  test('an empty insert body is 400', async () => {
    const res = await lib.rest('/authors', { method: 'POST', token: user.token });
    expect(res.status).toBe(400);
  });

  test('a body over 1 MB: 413, and nothing is written', async () => {
    const res = await lib.rest('/authors', {
      method: 'POST',
      token: user.token,
      body: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }),
    });
    expect(res.status).toBe(413);
    expect(body(res)).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    expect((await lib.admin.query(`select count(*)::int as n from public.authors`)).rows[0].n).toBe(1);
  });
});

describe('functions choosing their own error', () => {
  test("RAISE SQLSTATE 'PGRST' with JSON message and detail sets status, headers and body", async () => {
    const res = await lib.rest('/rpc/custom_refusal', { method: 'POST', body: '{}' });
    expect(res.status).toBe(402);
    expect(res.json).toEqual({
      code: 'quota_exceeded',
      message: 'Your plan allows 3 projects',
      details: '3 of 3 used',
      hint: 'Upgrade',
    });
    expect(res.headers.get('x-plan')).toBe('free');
  });

  test('a malformed one is a generic 500', async () => {
    const res = await lib.rest('/rpc/broken_refusal', { method: 'POST', body: '{}' });
    expect(res.status).toBe(500);
    expect(res.text).not.toContain('not json');
  });
});

describe('internal failures', () => {
  test('an unexpected database error is a generic 500 that does not leak its message', async () => {
    const res = await lib.rest('/rpc/crash', { method: 'POST', body: '{}' });
    expect(res.status).toBe(500);
    expect(res.text).not.toContain('secret');
    expect(body(res)).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    const loop = await lib.rest('/recursive');
    expect(loop.status).toBe(500);
    expect(res.text).not.toContain('recursion');
  });
});

describe('the schema cache', () => {
  test('a table created later is picked up after NOTIFY tenantry_schema', async () => {
    await lib.admin.query(`
      create table public.late (id integer primary key, label text);
      grant select on public.late to anon;
      insert into public.late values (1, 'hello');
      select pg_notify('tenantry_schema', 'reload');`);
    let res = await lib.rest('/late?select=label');
    for (let i = 0; i < 50 && res.status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      res = await lib.rest('/late?select=label');
    }
    expect(res.status).toBe(200);
    expect(res.json).toEqual([{ label: 'hello' }]);
  });

  test('a function created without a notification is found on demand', async () => {
    await lib.admin.query(
      `create function public.late_fn() returns integer language sql immutable as $$ select 7 $$`,
    );
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const res = await lib.rest('/rpc/late_fn', { method: 'POST', body: '{}' });
    expect(res.status).toBe(200);
    expect(res.json).toBe(7);
  });

  test('a dropped table or function is a clean 404 until the cache catches up', async () => {
    await lib.admin.query(`create table public.doomed (id integer); grant select on public.doomed to anon;
      create function public.doomed_fn() returns integer language sql stable as $$ select 1 $$`);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await lib.rest('/doomed')).status).toBe(200);
    expect((await lib.rest('/rpc/doomed_fn')).status).toBe(200);
    await lib.admin.query(`drop table public.doomed; drop function public.doomed_fn()`);
    const table = await lib.rest('/doomed');
    expect(table.status).toBe(404);
    expect(['42P01', 'PGRST205']).toContain(body(table).code);
    const fn = await lib.rest('/rpc/doomed_fn');
    expect(fn.status).toBe(404);
    expect(['42883', 'PGRST202']).toContain(body(fn).code);
  });

  test('a dropped column is a clean 400, not a 500', async () => {
    await lib.admin.query(`alter table public.late drop column label`);
    const res = await lib.rest('/late?select=label');
    expect(res.status).toBe(400);
  });
});
