// Reads through the real supabase-js client: select lists, renames, embeds, every filter
// operator, logic trees, ordering, paging, counts, single objects and HEAD.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';

let server: TestServer;
let owner: SignedIn;
let outsider: SignedIn;
let ws: string;
let other: string;
const names = ['Apollo', 'Gemini', 'Mercury', 'Artemis', 'Skylab'];

beforeAll(async () => {
  server = await startTestServer();
  owner = await signUp(server, 'owner');
  outsider = await signUp(server, 'outsider');
  ws = await workspace(server, owner, 'Space Agency');
  other = await workspace(server, outsider, 'Other Agency');
  for (const [i, name] of names.entries()) {
    const { error } = await owner.client
      .from('projects')
      .insert({ workspace_id: ws, name, description: i % 2 === 0 ? `mission ${i}` : null });
    expect(error).toBeNull();
  }
  await outsider.client.from('projects').insert({ workspace_id: other, name: 'Hidden' });
});
afterAll(async () => server?.close());

describe('select', () => {
  test('columns, renames and casts', async () => {
    const { data, error } = await owner.client
      .from('projects')
      .select('title:name, workspace_id, created_at::text')
      .eq('name', 'Apollo');
    expect(error).toBeNull();
    expect(data).toEqual([{ title: 'Apollo', workspace_id: ws, created_at: expect.any(String) }]);
  });

  test('RLS: only the caller’s tenants are visible, with no workspace id sent', async () => {
    const { data } = await owner.client.from('projects').select('name');
    expect(data!.map((p) => p.name).sort()).toEqual([...names].sort());
    const theirs = await outsider.client.from('projects').select('name');
    expect(theirs.data).toEqual([{ name: 'Hidden' }]);
  });

  test('embeds: to-one object, to-many array, nested, and !inner', async () => {
    const toOne = await owner.client
      .from('projects')
      .select('name, workspaces(name, slug)')
      .eq('name', 'Gemini')
      .single();
    expect(toOne.data).toEqual({
      name: 'Gemini',
      workspaces: { name: 'Space Agency', slug: 'space-agency' },
    });

    const toMany = await owner.client
      .from('workspaces')
      .select('name, projects(name), members:workspace_members(role, profiles(email))')
      .eq('id', ws)
      .order('name', { referencedTable: 'projects', ascending: true })
      .limit(2, { referencedTable: 'projects' })
      .single();
    expect(toMany.error).toBeNull();
    expect(toMany.data).toEqual({
      name: 'Space Agency',
      projects: [{ name: 'Apollo' }, { name: 'Artemis' }],
      members: [{ role: 'owner', profiles: { email: owner.email } }],
    });

    const inner = await owner.client
      .from('workspaces')
      .select('name, projects!inner(name)')
      .eq('projects.name', 'Skylab');
    expect(inner.data).toEqual([{ name: 'Space Agency', projects: [{ name: 'Skylab' }] }]);
    const noMatch = await owner.client
      .from('workspaces')
      .select('name, projects!inner(name)')
      .eq('projects.name', 'None');
    expect(noMatch.data).toEqual([]);
    const notInner = await owner.client
      .from('workspaces')
      .select('name, projects(name)')
      .eq('projects.name', 'None');
    expect(notInner.data).toEqual([{ name: 'Space Agency', projects: [] }]);
  });
});

describe('filters', () => {
  const query = () => owner.client.from('projects').select('name').order('name');
  const namesOf = async (q: PromiseLike<{ data: { name: string }[] | null; error: unknown }>) => {
    const { data, error } = await q;
    expect(error).toBeNull();
    return data!.map((r) => r.name);
  };

  test('comparison operators', async () => {
    expect(await namesOf(query().eq('name', 'Apollo'))).toEqual(['Apollo']);
    expect(await namesOf(query().neq('name', 'Apollo'))).toEqual(['Artemis', 'Gemini', 'Mercury', 'Skylab']);
    expect(await namesOf(query().gt('name', 'Gemini'))).toEqual(['Mercury', 'Skylab']);
    expect(await namesOf(query().gte('name', 'Gemini'))).toEqual(['Gemini', 'Mercury', 'Skylab']);
    expect(await namesOf(query().lt('name', 'Artemis'))).toEqual(['Apollo']);
    expect(await namesOf(query().lte('name', 'Artemis'))).toEqual(['Apollo', 'Artemis']);
  });

  test('like, ilike, is, in and not', async () => {
    expect(await namesOf(query().like('name', 'A%'))).toEqual(['Apollo', 'Artemis']);
    expect(await namesOf(query().ilike('name', '%LAB'))).toEqual(['Skylab']);
    expect(await namesOf(query().is('description', null))).toEqual(['Artemis', 'Gemini']);
    expect(await namesOf(query().not('description', 'is', null))).toEqual(['Apollo', 'Mercury', 'Skylab']);
    expect(await namesOf(query().in('name', ['Apollo', 'Skylab', 'Nope']))).toEqual(['Apollo', 'Skylab']);
    expect(await namesOf(query().in('name', ['with,comma', 'Gemini']))).toEqual(['Gemini']);
    expect(await namesOf(query().not('name', 'in', '(Apollo,Gemini)'))).toEqual([
      'Artemis',
      'Mercury',
      'Skylab',
    ]);
  });

  test('or, and, nested', async () => {
    expect(await namesOf(query().or('name.eq.Apollo,name.eq.Skylab'))).toEqual(['Apollo', 'Skylab']);
    expect(await namesOf(query().or('name.like.A*,and(name.gt.M,name.lt.N)'))).toEqual([
      'Apollo',
      'Artemis',
      'Mercury',
    ]);
    expect(await namesOf(query().or('name.eq."Apollo"'))).toEqual(['Apollo']);
  });
});

describe('order, paging and counts', () => {
  test('order desc with nulls placement', async () => {
    const { data } = await owner.client
      .from('projects')
      .select('name, description')
      .order('description', { ascending: false, nullsFirst: true })
      .order('name');
    expect(data!.map((r) => r.name)).toEqual(['Artemis', 'Gemini', 'Skylab', 'Mercury', 'Apollo']);
  });

  test('range with an exact count: Content-Range and 206', async () => {
    const res = await owner.client
      .from('projects')
      .select('name', { count: 'exact' })
      .order('name')
      .range(1, 2);
    expect(res.data!.map((r) => r.name)).toEqual(['Artemis', 'Gemini']);
    expect(res.count).toBe(5);
    expect(res.status).toBe(206);
  });

  test('HEAD with a count returns no rows', async () => {
    const res = await owner.client.from('projects').select('*', { count: 'exact', head: true });
    expect(res.count).toBe(5);
    expect(res.data).toBeNull();
    expect(res.status).toBe(200);
  });

  test('an offset beyond the total is 416', async () => {
    const res = await owner.client.from('projects').select('name', { count: 'exact' }).range(10, 20);
    expect(res.status).toBe(416);
    expect(res.error?.code).toBe('PGRST103');
  });

  test('raw Range header and limit/offset parameters', async () => {
    const raw = await fetch(`${server.url}/rest/v1/projects?select=name&order=name`, {
      headers: {
        apikey: server.config.projectApiKey,
        authorization: `Bearer ${owner.accessToken}`,
        range: '0-1',
      },
    });
    expect(raw.headers.get('content-range')).toBe('0-1/*');
    expect(await raw.json()).toEqual([{ name: 'Apollo' }, { name: 'Artemis' }]);
  });
});

describe('single', () => {
  test('single() with one row is an object; with zero or many it is 406 PGRST116', async () => {
    const one = await owner.client.from('projects').select('name').eq('name', 'Apollo').single();
    expect(one.data).toEqual({ name: 'Apollo' });
    const none = await owner.client.from('projects').select('name').eq('name', 'Nothing').single();
    expect(none.status).toBe(406);
    expect(none.error).toMatchObject({ code: 'PGRST116', details: 'The result contains 0 rows' });
    const many = await owner.client.from('projects').select('name').single();
    expect(many.error).toMatchObject({ code: 'PGRST116', details: 'The result contains 5 rows' });
    const maybe = await owner.client.from('projects').select('name').eq('name', 'Nothing').maybeSingle();
    expect(maybe.data).toBeNull();
    expect(maybe.error).toBeNull();
  });
});
