// The service role's createUser with what GoTrue lets it choose: the user's id (moving users over
// with their references), an existing argon2 or bcrypt password hash instead of a password, and a
// ban from the start; ban durations in Go's syntax, as supabase-js documents them, on create and
// update.
import { randomUUID } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import { hash as bcryptHash } from '@node-rs/bcrypt';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

let n = 0;
const email = () => `admin-create-${++n}-${Date.now()}@example.com`;
const PASSWORD = 'correct horse battery';
const admin = () => server.adminClient().auth.admin;
const userCount = async () =>
  Number((await server.pool.query<{ n: string }>('select count(*) as n from auth.users')).rows[0]!.n);

test('a chosen id is the user’s id, in the user, its identity and the token', async () => {
  const id = randomUUID();
  const address = email();
  const { data, error } = await admin().createUser({
    id,
    email: address,
    password: PASSWORD,
    email_confirm: true,
  });
  expect(error).toBeNull();
  expect(data.user!.id).toBe(id);
  expect(data.user!.identities![0]).toMatchObject({ user_id: id, id });
  const signIn = await server.client().auth.signInWithPassword({ email: address, password: PASSWORD });
  expect(signIn.data.user!.id).toBe(id);
});

test('a chosen id must be a UUID, not the nil one, and not taken; nothing is created otherwise', async () => {
  const before = await userCount();
  const taken = randomUUID();
  expect((await admin().createUser({ id: taken, email: email() })).error).toBeNull();
  const cases: [string, number, string, string][] = [
    ['not-a-uuid', 400, 'validation_failed', 'ID must conform to the uuid v4 format'],
    ['00000000-0000-0000-0000-000000000000', 400, 'validation_failed', 'ID cannot be a nil uuid'],
    [taken, 422, 'user_already_exists', 'A user with this ID already exists'],
  ];
  for (const [id, status, code, message] of cases) {
    const { error } = await admin().createUser({ id, email: email() });
    expect(error, id).toMatchObject({ status, code, message });
  }
  expect(await userCount()).toBe(before + 1);
});

test('an argon2 password hash is kept: the user signs in with the password it hashes', async () => {
  const address = email();
  const passwordHash = await hash(PASSWORD, { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 });
  const { error } = await admin().createUser({
    email: address,
    password_hash: passwordHash,
    email_confirm: true,
  });
  expect(error).toBeNull();
  const stored = await server.pool.query('select encrypted_password from auth.users where email = $1', [
    address,
  ]);
  expect(stored.rows[0].encrypted_password).toBe(passwordHash);
  expect(
    (await server.client().auth.signInWithPassword({ email: address, password: PASSWORD })).error,
  ).toBeNull();
  const wrong = await server
    .client()
    .auth.signInWithPassword({ email: address, password: 'not the password' });
  expect(wrong.error).toMatchObject({ status: 400, code: 'invalid_credentials' });
});

test('an imported bcrypt hash signs its user in, and becomes argon2id at that first sign-in', async () => {
  const address = email();
  const imported = await bcryptHash(PASSWORD, 10);
  expect(
    (await admin().createUser({ email: address, password_hash: imported, email_confirm: true })).error,
  ).toBeNull();
  const storedHash = async () =>
    (await server.pool.query('select encrypted_password from auth.users where email = $1', [address])).rows[0]
      .encrypted_password as string;

  // a wrong password changes nothing
  const wrong = await server
    .client()
    .auth.signInWithPassword({ email: address, password: 'not the password' });
  expect(wrong.error).toMatchObject({ status: 400, code: 'invalid_credentials' });
  expect(await storedHash()).toBe(imported);

  const first = await server.client().auth.signInWithPassword({ email: address, password: PASSWORD });
  expect(first.error).toBeNull();
  const upgraded = await storedHash();
  expect(upgraded).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  expect(await verify(upgraded, PASSWORD)).toBe(true);
  const again = await server.client().auth.signInWithPassword({ email: address, password: PASSWORD });
  expect(again.error).toBeNull();
  expect(await storedHash()).toBe(upgraded);
});

test('a hash sign-in cannot verify, or a hash beside a password, is refused and creates nothing', async () => {
  const before = await userCount();
  const unverifiable = [
    '$fbscrypt$v=1,n=14,r=8,p=1,ss=Bw==,sk=ou9tdYTGyYm8kuR6Dt0Bp0kDuAYoXrK16mbZO4yGwAn3oLspjnN0/c41v8xZnO1n14J3MjKj1b2g6AUCAlFwMw==$C0sHCg9ek77hsg==$ZGlmZmVyZW50aGFzaA==',
    '$2a$10$too-short',
    '$2a$03$abcdefghijklmnopqrstuu5Y6I3a8S3bW3q1i0n5x8YJ0s1q2w3e4',
    'plain text',
  ];
  for (const passwordHash of unverifiable) {
    const refused = await admin().createUser({ email: email(), password_hash: passwordHash });
    expect(refused.error, passwordHash).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(refused.error!.message).toContain('bcrypt');
  }
  const both = await admin().createUser({
    email: email(),
    password: PASSWORD,
    password_hash: await hash(PASSWORD),
  });
  expect(both.error).toMatchObject({
    status: 400,
    code: 'validation_failed',
    message: 'Only a password or a password hash should be provided',
  });
  expect(await userCount()).toBe(before);
});

test('ban_duration on create bans the new user from the start', async () => {
  const address = email();
  const started = Date.now();
  const { data, error } = await admin().createUser({
    email: address,
    password: PASSWORD,
    email_confirm: true,
    ban_duration: '2h45m',
  });
  expect(error).toBeNull();
  const until = Date.parse(data.user!.banned_until!);
  expect(until - started).toBeGreaterThanOrEqual(9_900_000 - 5_000);
  expect(until - started).toBeLessThanOrEqual(9_900_000 + 60_000);
  const signIn = await server.client().auth.signInWithPassword({ email: address, password: PASSWORD });
  expect(signIn.error).toMatchObject({ code: 'user_banned' });
});

test('updateUserById reads Go durations: "30m" and "1.5h" ban, "none" lifts, nonsense is 400 and changes nothing', async () => {
  const created = await admin().createUser({ email: email(), password: PASSWORD });
  const id = created.data.user!.id;
  for (const [duration, ms] of [
    ['30m', 1_800_000],
    ['1.5h', 5_400_000],
  ] as const) {
    const started = Date.now();
    const { data, error } = await admin().updateUserById(id, { ban_duration: duration });
    expect(error, duration).toBeNull();
    const left = Date.parse(data.user!.banned_until!) - started;
    expect(left, duration).toBeGreaterThanOrEqual(ms - 5_000);
    expect(left, duration).toBeLessThanOrEqual(ms + 60_000);
  }
  const lifted = await admin().updateUserById(id, { ban_duration: 'none' });
  expect(lifted.data.user!.banned_until).toBeUndefined();

  const res = await call(server, 'PUT', `/auth/v1/admin/users/${id}`, {
    headers: { authorization: `Bearer ${server.config.serviceRoleKey}` },
    body: { ban_duration: '3 days' },
  });
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({
    error_code: 'validation_failed',
    msg: 'invalid format for ban duration: time: invalid duration "3 days"',
  });
  expect((await admin().getUserById(id)).data.user!.banned_until).toBeUndefined();
});

test('metadata merges key by key: a top-level null removes its key, a null deeper down is kept', async () => {
  const created = await admin().createUser({
    email: email(),
    user_metadata: { keep: 1, drop: 'x' },
    app_metadata: { plan: 'pro', gone: true },
  });
  const id = created.data.user!.id;
  const { data, error } = await admin().updateUserById(id, {
    user_metadata: { prefs: { theme: null, lang: 'en' }, list: [1, null], drop: null },
    app_metadata: { gone: null, limits: { seats: null } },
  });
  expect(error).toBeNull();
  expect(data.user!.user_metadata).toEqual({ keep: 1, prefs: { theme: null, lang: 'en' }, list: [1, null] });
  expect(data.user!.app_metadata).toMatchObject({ plan: 'pro', limits: { seats: null } });
  expect(data.user!.app_metadata).not.toHaveProperty('gone');

  // The user's own updateUser({data}) follows the same rule.
  const address = email();
  await admin().createUser({ email: address, password: PASSWORD, email_confirm: true });
  const client = server.client();
  await client.auth.signInWithPassword({ email: address, password: PASSWORD });
  await client.auth.updateUser({ data: { a: 1, b: { c: null } } });
  const own = await client.auth.updateUser({ data: { a: null } });
  expect(own.data.user!.user_metadata).toEqual({ b: { c: null }, email_verified: true });
});
