// What the service asks an administrator to run once, for each way a provider sets up the owner
// role: nothing for a superuser or a Supabase-style owner, the exact statements otherwise.
import { describe, expect, test } from 'vitest';
import { setupProblems, type Facts, type RoleFacts } from '../../src/server/db/preflight.js';

const role = (name: string, over: Partial<RoleFacts> = {}): RoleFacts => ({
  name,
  exists: true,
  bypassrls: name === 'service_role',
  member: true,
  admin: true,
  ...over,
});

const facts = (over: Partial<Facts> = {}): Facts => ({
  user: 'app_owner',
  database: 'app',
  version: 17,
  superuser: false,
  createrole: true,
  bypassrls: true,
  createOnDatabase: true,
  installed: false,
  foreignAuth: false,
  roles: [role('anon'), role('authenticated'), role('service_role')],
  ...over,
});

const sql = (f: Facts) => setupProblems(f).map((p) => p.sql);

describe('setupProblems', () => {
  test('a superuser, or an owner set up as Supabase sets up its postgres role, needs nothing', () => {
    expect(sql(facts({ superuser: true, bypassrls: false, roles: [] }))).toEqual([]);
    expect(sql(facts())).toEqual([]);
  });

  test('CREATEROLE only, with the request roles already made by someone else', () => {
    const f = facts({
      bypassrls: false,
      roles: ['anon', 'authenticated', 'service_role'].map((n) => role(n, { member: false, admin: false })),
    });
    expect(sql(f)).toEqual([
      'alter role "app_owner" bypassrls;',
      'grant anon to "app_owner" with admin option;',
      'grant authenticated to "app_owner" with admin option;',
      'grant service_role to "app_owner" with admin option;',
    ]);
  });

  test('on PostgreSQL 15 only a superuser gives BYPASSRLS: service_role must be made with it', () => {
    const f = facts({
      version: 15,
      roles: [role('anon'), role('authenticated'), role('service_role', { exists: false })],
    });
    expect(sql(f)).toEqual([
      'create role service_role nologin noinherit bypassrls; grant service_role to "app_owner" with admin option;',
    ]);
    // On 16 and later an owner that bypasses RLS and made the role may give it.
    expect(sql({ ...f, version: 16 })).toEqual([]);
  });

  test('an existing service_role without BYPASSRLS, and a database the owner cannot create in', () => {
    const f = facts({
      version: 15,
      createOnDatabase: false,
      roles: [role('anon'), role('authenticated'), role('service_role', { bypassrls: false })],
    });
    expect(sql(f)).toEqual([
      'grant create on database "app" to "app_owner";',
      'alter role service_role bypassrls;',
    ]);
    expect(sql({ ...f, installed: true, version: 16 })).toEqual([]);
  });

  test("another identity service's auth schema is refused whoever connects", () => {
    const problems = setupProblems(facts({ superuser: true, foreignAuth: true }));
    expect(problems).toHaveLength(1);
    expect(problems[0]!.why).toMatch(/will not share the schema/);
  });
});
