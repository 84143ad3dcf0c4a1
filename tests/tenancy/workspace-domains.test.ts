// Domain auto-join through supabase-js as an application would use it (decision 0095): a workspace
// claims a domain, proves it by an owner's confirmed address or by a DNS TXT record (a real local
// DNS server and node:dns), and people whose confirmed address is on it join at the chosen role
// or ask to join and are approved or denied (told by e-mail). Free-mail domains, a domain verified
// elsewhere, unconfirmed addresses, look-alike domains and calls around the functions are refused.
import { randomUUID } from 'node:crypto';
import type { SupabaseClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { withService } from '../../src/server/db/transactions.js';
import { createTxtLookup } from '../../src/server/domains/txt-lookup.js';
import { RequestedDomainChecks } from '../../src/server/domains/requested-checks.js';
import { checkDomain, recheckDomains } from '../../src/server/domains/verification.js';
import { createLogger } from '../../src/server/logger.js';
import { startDnsServer, type DnsServer } from '../support/dns-server.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { workspace, type SignedIn } from '../support/workspaces.js';

let server: TestServer;
let dns: DnsServer;
let lookUp: ReturnType<typeof createTxtLookup>;
const run = randomUUID().slice(0, 8);
/** a domain of this run, so suites sharing a database never meet */
const dom = (name: string) => `${name}-${run}.com`;

interface Domain {
  id: string;
  domain: string;
  verified: boolean;
  verified_by: string | null;
  policy: string;
  join_role: string;
  dns_record_name: string;
  dns_record_value: string;
  last_checked_at: string | null;
}

async function person(email: string): Promise<SignedIn> {
  const client = server.client();
  const { data, error } = await client.auth.signUp({ email, password: 'correct horse battery' });
  if (error || !data.session) throw new Error(`sign-up failed: ${error?.message}`);
  return {
    client,
    id: data.user!.id,
    email,
    accessToken: data.session.access_token,
    refreshToken: data.session.refresh_token,
  };
}

async function ok<T>(client: SupabaseClient, fn: string, args: Record<string, unknown> = {}): Promise<T> {
  const { data, error } = await client.rpc(fn, args);
  if (error) throw new Error(`${fn} failed: ${error.message}`);
  return data as T;
}

async function refused(client: SupabaseClient, fn: string, args: Record<string, unknown> = {}) {
  const { data, error } = await client.rpc(fn, args);
  expect(data).toBeNull();
  expect(error).not.toBeNull();
  return error!;
}

async function memberRole(ws: string, user: string): Promise<string | null> {
  const r = await server.pool.query<{ role: string }>(
    'select role from public.workspace_members where workspace_id = $1 and user_id = $2',
    [ws, user],
  );
  return r.rows[0]?.role ?? null;
}

async function auditActions(ws: string): Promise<string[]> {
  const r = await server.pool.query<{ action: string }>(
    `select action from public.audit_events where workspace_id = $1 and (action like 'domain.%' or action like 'join_request.%')
     order by id`,
    [ws],
  );
  return r.rows.map((row) => row.action);
}

/** A workspace owned by someone at `ownerEmail`, and its id. */
async function team(ownerEmail: string, name: string) {
  const owner = await person(ownerEmail);
  const id = await workspace(server, owner, name);
  return { owner, id };
}

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_SIGNUP_PER_ADDRESS: '1000' });
  dns = await startDnsServer();
  lookUp = createTxtLookup({ servers: [dns.address], timeoutMs: 500 });
});
afterAll(async () => {
  await server?.close();
  await dns?.close();
});

describe('claiming a domain', () => {
  test('verified at once by an owner with a confirmed address on it; normalised to lower case', async () => {
    const { owner, id } = await team(`boss@${dom('acme')}`, 'Acme');
    const added = await ok<Domain>(owner.client, 'add_workspace_domain', {
      workspace_id: id,
      domain: `  @${dom('ACME').toUpperCase()}. `,
    });
    expect(added).toMatchObject({
      domain: dom('acme'),
      verified: true,
      verified_by: 'owner_email',
      policy: 'off',
    });
    expect(added.dns_record_name).toBe(`_tenantry.${dom('acme')}`);
    expect(added.dns_record_value).toMatch(/^tenantry-verification=[0-9a-f]{32}$/);
    const listed = await ok<Domain[]>(owner.client, 'list_workspace_domains', { workspace_id: id });
    expect(listed.map((d) => d.domain)).toEqual([dom('acme')]);
    expect(await auditActions(id)).toEqual(['domain.added', 'domain.verified']);
  });

  test('free-mail domains, public suffixes and what is not a domain are refused, and nothing is added', async () => {
    const { owner, id } = await team(`boss@${dom('refusals')}`, 'Refusals');
    for (const [domain, message] of [
      ['gmail.com', /shared mail service/],
      ['Outlook.com', /shared mail service/],
      ['mail.yahoo.com', /shared mail service/],
      ['co.uk', /cannot be claimed/],
      ['com', /not a domain/],
      ['acme..com', /not a domain/],
      ['-acme.com', /not a domain/],
      ['exämple.com', /punycode/],
      ['', /Enter a domain/],
    ] as const) {
      const error = await refused(owner.client, 'add_workspace_domain', { workspace_id: id, domain });
      expect(error.code, domain).toBe('22023');
      expect(error.message, domain).toMatch(message);
    }
    expect(await ok<Domain[]>(owner.client, 'list_workspace_domains', { workspace_id: id })).toEqual([]);
    // an IDN in its punycode form is a domain like any other
    const idn = await ok<Domain>(owner.client, 'add_workspace_domain', {
      workspace_id: id,
      domain: `xn--exmple-cua-${run}.com`,
    });
    expect(idn.verified).toBe(false);
  });

  test("a domain held by an owner's address may be claimed elsewhere; one held by DNS is refused; the same workspace twice too", async () => {
    const first = await team(`lead@${dom('taken')}`, 'First');
    await ok(first.owner.client, 'add_workspace_domain', { workspace_id: first.id, domain: dom('taken') });
    // Another workspace may claim it, to prove it by DNS; even an owner's address there does not
    // verify it while the first holds it.
    const second = await team(`other@${dom('taken')}`, 'Second');
    const claim = await ok<Domain & { held_elsewhere: boolean }>(
      second.owner.client,
      'add_workspace_domain',
      {
        workspace_id: second.id,
        domain: dom('taken'),
      },
    );
    expect(claim).toMatchObject({ verified: false, held_elsewhere: true });
    const again = await refused(first.owner.client, 'add_workspace_domain', {
      workspace_id: first.id,
      domain: dom('taken'),
    });
    expect(again.message).toMatch(/already added/);

    // A domain held by its DNS record is refused to everyone else.
    const dnsHolder = await team(`lead@${dom('dns-held-owner')}`, 'DNS Holder');
    const d = await ok<Domain>(dnsHolder.owner.client, 'add_workspace_domain', {
      workspace_id: dnsHolder.id,
      domain: dom('dns-held'),
    });
    dns.txt.set(dom('dns-held'), [d.dns_record_value]);
    const token = d.dns_record_value.slice('tenantry-verification='.length);
    expect(await checkDomain(server.pool, lookUp, { id: d.id, domain: d.domain, token })).toMatchObject({
      verified: true,
      verified_by: 'dns',
    });
    const error = await refused(second.owner.client, 'add_workspace_domain', {
      workspace_id: second.id,
      domain: dom('dns-held'),
    });
    expect(error.code).toBe('23505');
    expect(error.message).toMatch(/verified by another workspace/);
  });

  test('members and viewers cannot claim, list or change domains; outsiders see nothing', async () => {
    const { owner, id } = await team(`boss@${dom('roles')}`, 'Roles');
    const member = await person(`m@${dom('roles-m')}`);
    const outsider = await person(`o@${dom('roles-o')}`);
    await withService(server.pool, (tx) =>
      tx.query(
        `insert into public.workspace_members (workspace_id, user_id, role) values ($1, $2, 'member')`,
        [id, member.id],
      ),
    );
    const d = await ok<Domain>(owner.client, 'add_workspace_domain', {
      workspace_id: id,
      domain: dom('roles'),
    });
    for (const who of [member, outsider]) {
      expect(
        (await refused(who.client, 'add_workspace_domain', { workspace_id: id, domain: dom('x') })).code,
      ).toBe('PT404');
      expect((await refused(who.client, 'list_workspace_domains', { workspace_id: id })).code).toBe('PT404');
      expect(
        (await refused(who.client, 'set_workspace_domain_policy', { domain_id: d.id, policy: 'auto_join' }))
          .code,
      ).toBe('PT404');
      expect((await refused(who.client, 'remove_workspace_domain', { domain_id: d.id })).code).toBe('PT404');
    }
  });

  test('verification by an owner address goes when that owner leaves or changes address', async () => {
    const { owner, id } = await team(`founder@${dom('leaving')}`, 'Leaving');
    const d = await ok<Domain>(owner.client, 'add_workspace_domain', {
      workspace_id: id,
      domain: dom('leaving'),
    });
    expect(d.verified).toBe(true);
    // the owner's address moves elsewhere (confirmed there): the proof is gone
    await withService(server.pool, (tx) =>
      tx.query(`update auth.users set email = $2 where id = $1`, [owner.id, `founder@${dom('moved')}`]),
    );
    let [now] = await ok<Domain[]>(owner.client, 'list_workspace_domains', { workspace_id: id });
    expect(now).toMatchObject({ verified: false, verified_by: null });
    // back on the domain: verified again
    await withService(server.pool, (tx) =>
      tx.query(`update auth.users set email = $2 where id = $1`, [owner.id, `founder@${dom('leaving')}`]),
    );
    [now] = await ok<Domain[]>(owner.client, 'list_workspace_domains', { workspace_id: id });
    expect(now!.verified).toBe(true);
    // a second owner elsewhere takes over and the first leaves
    const heir = await person(`heir@${dom('heir')}`);
    await withService(server.pool, (tx) =>
      tx.query(
        `insert into public.workspace_members (workspace_id, user_id, role) values ($1, $2, 'owner')`,
        [id, heir.id],
      ),
    );
    await ok(owner.client, 'leave_workspace', { workspace_id: id });
    [now] = await ok<Domain[]>(heir.client, 'list_workspace_domains', { workspace_id: id });
    expect(now!.verified).toBe(false);
    expect(await auditActions(id)).toEqual([
      'domain.added',
      'domain.verified',
      'domain.unverified',
      'domain.verified',
      'domain.unverified',
    ]);
  });
  test('an owner demoted to admin no longer proves the domain; promoted back, it is verified again', async () => {
    const { owner, id } = await team(`founder@${dom('demoted')}`, 'Demoted');
    const other = await person(`other@${dom('demoted-other')}`);
    await withService(server.pool, (tx) =>
      tx.query(
        `insert into public.workspace_members (workspace_id, user_id, role) values ($1, $2, 'owner')`,
        [id, other.id],
      ),
    );
    await ok(owner.client, 'add_workspace_domain', { workspace_id: id, domain: dom('demoted') });
    const state = async () =>
      (await ok<Domain[]>(other.client, 'list_workspace_domains', { workspace_id: id }))[0]!;
    expect((await state()).verified).toBe(true);
    await ok(other.client, 'update_member_role', { workspace_id: id, user_id: owner.id, role: 'admin' });
    expect((await state()).verified).toBe(false);
    await ok(other.client, 'update_member_role', { workspace_id: id, user_id: owner.id, role: 'owner' });
    expect((await state()).verified).toBe(true);
  });
});

describe('verification by DNS', () => {
  test('the TXT record at _tenantry.<domain> or the apex verifies; a wrong token does not', async () => {
    const { owner, id } = await team(`it@${dom('dns-owner')}`, 'DNS Co');
    const d = await ok<Domain>(owner.client, 'add_workspace_domain', {
      workspace_id: id,
      domain: dom('dns'),
    });
    expect(d.verified).toBe(false);
    dns.txt.set(`_tenantry.${dom('dns')}`, ['v=spf1 -all', 'tenantry-verification=' + '0'.repeat(32)]);
    dns.txt.set(dom('dns'), []);
    const token = d.dns_record_value.split('=')[1]!;
    let check = await checkDomain(server.pool, lookUp, { id: d.id, domain: d.domain, token });
    expect(check).toMatchObject({ outcome: 'missing', verified: false });
    dns.txt.set(dom('dns'), [d.dns_record_value]);
    check = await checkDomain(server.pool, lookUp, { id: d.id, domain: d.domain, token }, owner.id);
    expect(check).toMatchObject({ outcome: 'found', verified: true, verified_by: 'dns' });
    // the record at _tenantry.<domain> does it as well
    const sub = await ok<Domain>(owner.client, 'add_workspace_domain', {
      workspace_id: id,
      domain: dom('dns2'),
    });
    dns.txt.set(`_tenantry.${dom('dns2')}`, [sub.dns_record_value]);
    const second = await checkDomain(server.pool, lookUp, {
      id: sub.id,
      domain: sub.domain,
      token: sub.dns_record_value.split('=')[1]!,
    });
    expect(second.verified).toBe(true);
  });

  test('the periodic re-check takes a DNS verification away when the record goes, not when DNS fails', async () => {
    const { owner, id } = await team(`it@${dom('recheck-owner')}`, 'Recheck');
    const d = await ok<Domain>(owner.client, 'add_workspace_domain', {
      workspace_id: id,
      domain: dom('recheck'),
    });
    dns.txt.set(dom('recheck'), [d.dns_record_value]);
    dns.txt.set(`_tenantry.${dom('recheck')}`, []);
    const tally = await recheckDomains(server.pool, lookUp, 1000);
    expect(tally.checked).toBeGreaterThan(0);
    const state = async () =>
      (await ok<Domain[]>(owner.client, 'list_workspace_domains', { workspace_id: id }))[0]!;
    expect((await state()).verified).toBe(true);
    // the resolver fails: nothing changes
    dns.failing.add(dom('recheck'));
    await recheckDomains(server.pool, lookUp, 1000);
    expect((await state()).verified).toBe(true);
    // the record is removed: verification goes
    dns.failing.delete(dom('recheck'));
    dns.txt.set(dom('recheck'), ['something else']);
    await recheckDomains(server.pool, lookUp, 1000);
    expect((await state()).verified).toBe(false);
    expect(await auditActions(id)).toEqual(['domain.added', 'domain.verified', 'domain.unverified']);
  });

  test("a DNS record takes a domain over from an owner's address; the holder is told; a lost record gives it back", async () => {
    const holder = await team(`boss@${dom('held')}`, 'Holder');
    const held = await ok<Domain>(holder.owner.client, 'add_workspace_domain', {
      workspace_id: holder.id,
      domain: dom('held'),
    });
    expect(held).toMatchObject({ verified: true, verified_by: 'owner_email' });
    await ok(holder.owner.client, 'set_workspace_domain_policy', {
      domain_id: held.id,
      policy: 'auto_join',
      join_role: 'member',
    });
    // The company's workspace proves the domain by DNS.
    const company = await team(`it@${dom('company')}`, 'Company');
    const claim = await ok<Domain & { held_elsewhere: boolean }>(
      company.owner.client,
      'add_workspace_domain',
      {
        workspace_id: company.id,
        domain: dom('held'),
      },
    );
    expect(claim.held_elsewhere).toBe(true);
    const token = claim.dns_record_value.slice('tenantry-verification='.length);
    dns.txt.set(dom('held'), [claim.dns_record_value]);
    const check = await checkDomain(server.pool, lookUp, { id: claim.id, domain: claim.domain, token });
    expect(check).toMatchObject({
      outcome: 'found',
      verified: true,
      verified_by: 'dns',
      held_elsewhere: false,
    });

    // The holder's claim is unverified: nobody new joins there by the domain; its admins are told.
    const [before] = await ok<Domain[]>(holder.owner.client, 'list_workspace_domains', {
      workspace_id: holder.id,
    });
    expect(before).toMatchObject({ verified: false, held_elsewhere: true });
    const newcomer = await person(`new@${dom('held')}`);
    expect(
      (await refused(newcomer.client, 'join_workspace_by_domain', { workspace_id: holder.id })).code,
    ).toBe('42501');
    expect((await auditActions(holder.id)).at(-1)).toBe('domain.unverified');
    const told = await server.pool.query<{ subject: string; template: unknown }>(
      `select subject, template from internal.outbox where kind = 'domain_taken_over' and to_address = $1`,
      [holder.owner.email],
    );
    expect(told.rows).toEqual([
      expect.objectContaining({ subject: `${dom('held')} is no longer verified for Holder` }),
    ]);
    expect(told.rows[0]!.template).toMatchObject({ layout: 'notice' });

    // When the record goes, the owner-address claim takes the domain back at once.
    dns.txt.set(dom('held'), []);
    const gone = await checkDomain(server.pool, lookUp, { id: claim.id, domain: claim.domain, token });
    expect(gone).toMatchObject({ outcome: 'missing', verified: false, held_elsewhere: true });
    const [after] = await ok<Domain[]>(holder.owner.client, 'list_workspace_domains', {
      workspace_id: holder.id,
    });
    expect(after).toMatchObject({ verified: true, verified_by: 'owner_email' });

    // Taken over again, then the company removes its claim: the holder has it back at once.
    dns.txt.set(dom('held'), [claim.dns_record_value]);
    await checkDomain(server.pool, lookUp, { id: claim.id, domain: claim.domain, token });
    await ok(company.owner.client, 'remove_workspace_domain', { domain_id: claim.id });
    const [back] = await ok<Domain[]>(holder.owner.client, 'list_workspace_domains', {
      workspace_id: holder.id,
    });
    expect(back).toMatchObject({ verified: true, verified_by: 'owner_email' });
  });

  test('an integration asks for a check through the data API; an instance looks it up within seconds', async () => {
    const { owner, id } = await team(`boss@${dom('asked-owner')}`, 'Asked');
    const d = await ok<Domain>(owner.client, 'add_workspace_domain', {
      workspace_id: id,
      domain: dom('asked'),
    });
    const member = await person(`m@${dom('asked-member')}`);
    await withService(server.pool, (tx) =>
      tx.query(
        `insert into public.workspace_members (workspace_id, user_id, role) values ($1, $2, 'member')`,
        [id, member.id],
      ),
    );
    expect((await refused(member.client, 'request_domain_check', { domain_id: d.id })).code).toBe('PT404');
    dns.txt.set(dom('asked'), [d.dns_record_value]);
    const asked = await ok<{ check_requested_at: string }>(owner.client, 'request_domain_check', {
      domain_id: d.id,
    });
    expect(asked.check_requested_at).toBeTruthy();
    // Asking again before the lookup keeps the one request.
    await ok(owner.client, 'request_domain_check', { domain_id: d.id });

    const checks = new RequestedDomainChecks({ pool: server.pool, lookUp, logger: createLogger('silent') });
    expect(await checks.runOnce()).toBe(1);
    expect(await checks.runOnce()).toBe(0);
    const [after] = await ok<Domain[]>(owner.client, 'list_workspace_domains', { workspace_id: id });
    expect(after).toMatchObject({ verified: true, verified_by: 'dns' });
    expect(after!.last_checked_at).toBeTruthy();

    // Checked moments ago: the next ask waits 30 s. A domain an owner's address proves has nothing to check.
    expect((await refused(owner.client, 'request_domain_check', { domain_id: d.id })).code).toBe('PT429');
    const byAddress = await ok<Domain>(owner.client, 'add_workspace_domain', {
      workspace_id: id,
      domain: dom('asked-owner'),
    });
    expect(byAddress.verified_by).toBe('owner_email');
    expect((await refused(owner.client, 'request_domain_check', { domain_id: byAddress.id })).code).toBe(
      '22023',
    );
  });

  test('clients cannot report a DNS finding or read the tables', async () => {
    const { owner, id } = await team(`boss@${dom('bypass')}`, 'Bypass');
    const d = await ok<Domain>(owner.client, 'add_workspace_domain', {
      workspace_id: id,
      domain: dom('bypass-x'),
    });
    const { error } = await owner.client
      .schema('internal' as 'public')
      .rpc('record_domain_dns_check', { domain_id: d.id, record_found: true });
    expect(error).not.toBeNull();
    const attempt = await owner.client.rpc('record_domain_dns_check', {
      domain_id: d.id,
      record_found: true,
    });
    expect(attempt.error?.code).toBe('PGRST202');
    const table = await owner.client.from('workspace_domains').select('*');
    expect(table.error).not.toBeNull();
    expect(
      (await ok<Domain[]>(owner.client, 'list_workspace_domains', { workspace_id: id }))[0]!.verified,
    ).toBe(false);
  });
});

describe('joining by domain', () => {
  let owner: SignedIn;
  let ws: string;
  let domainId: string;

  beforeAll(async () => {
    ({ owner, id: ws } = await team(`ceo@${dom('join')}`, 'Join Co'));
    domainId = (
      await ok<Domain>(owner.client, 'add_workspace_domain', { workspace_id: ws, domain: dom('join') })
    ).id;
  });

  test('policies: only a verified domain opens, and never at admin or owner', async () => {
    const { owner: o2, id: w2 } = await team(`p@${dom('policy-owner')}`, 'Policy');
    const unverified = await ok<Domain>(o2.client, 'add_workspace_domain', {
      workspace_id: w2,
      domain: dom('policy'),
    });
    const error = await refused(o2.client, 'set_workspace_domain_policy', {
      domain_id: unverified.id,
      policy: 'auto_join',
    });
    expect(error.message).toMatch(/Verify/);
    for (const role of ['admin', 'owner', 'boss']) {
      const e = await refused(owner.client, 'set_workspace_domain_policy', {
        domain_id: domainId,
        policy: 'auto_join',
        join_role: role,
      });
      expect(e.code).toBe('22023');
    }
    expect(
      (await refused(owner.client, 'set_workspace_domain_policy', { domain_id: domainId, policy: 'open' }))
        .code,
    ).toBe('22023');
  });

  test('auto-join: a confirmed address on the domain sees the workspace and joins at the chosen role', async () => {
    await ok(owner.client, 'set_workspace_domain_policy', {
      domain_id: domainId,
      policy: 'auto_join',
      join_role: 'viewer',
    });
    const alice = await person(`alice@${dom('join')}`);
    const list = await ok<{ workspace_id: string; policy: string; join_role: string }[]>(
      alice.client,
      'joinable_workspaces',
    );
    expect(list).toEqual([
      expect.objectContaining({ workspace_id: ws, policy: 'auto_join', join_role: 'viewer' }),
    ]);
    const joined = await ok<{ role: string; slug: string }>(alice.client, 'join_workspace_by_domain', {
      workspace_id: ws,
    });
    expect(joined.role).toBe('viewer');
    expect(await memberRole(ws, alice.id)).toBe('viewer');
    expect(await ok<unknown[]>(alice.client, 'joinable_workspaces')).toEqual([]);
    expect((await refused(alice.client, 'join_workspace_by_domain', { workspace_id: ws })).code).toBe(
      'PT409',
    );
    const audit = await server.pool.query<{ action: string; user_id: string; details: { role: string } }>(
      `select action, user_id, details from public.audit_events where workspace_id = $1 and action = 'domain.auto_joined'`,
      [ws],
    );
    expect(audit.rows).toEqual([
      { action: 'domain.auto_joined', user_id: alice.id, details: { role: 'viewer' } },
    ]);
  });

  test('unconfirmed addresses, look-alike domains and subdomains do not qualify', async () => {
    const unconfirmed = await person(`bob@${dom('join')}`);
    await withService(server.pool, (tx) =>
      tx.query('update auth.users set email_confirmed_at = null where id = $1', [unconfirmed.id]),
    );
    const lookalikes = await Promise.all(
      [
        `eve@${dom('join')}.evil.com`,
        `eve@sub.${dom('join')}`,
        `eve@x${dom('join')}`,
        `eve@${dom('join')}.co`,
      ].map(person),
    );
    for (const who of [unconfirmed, ...lookalikes]) {
      expect(await ok<unknown[]>(who.client, 'joinable_workspaces'), who.email).toEqual([]);
      const error = await refused(who.client, 'join_workspace_by_domain', { workspace_id: ws });
      expect(error.code, who.email).toBe('42501');
      expect((await refused(who.client, 'request_to_join_workspace', { workspace_id: ws })).code).toBe(
        '42501',
      );
      expect(await memberRole(ws, who.id)).toBeNull();
    }
  });

  test('a changed address is judged anew: moving off the domain closes the door', async () => {
    const carol = await person(`carol@${dom('join')}`);
    expect(await ok<unknown[]>(carol.client, 'joinable_workspaces')).toHaveLength(1);
    await withService(server.pool, (tx) =>
      tx.query('update auth.users set email = $2 where id = $1', [carol.id, `carol@${dom('gone')}`]),
    );
    expect(await ok<unknown[]>(carol.client, 'joinable_workspaces')).toEqual([]);
    expect((await refused(carol.client, 'join_workspace_by_domain', { workspace_id: ws })).code).toBe(
      '42501',
    );
  });

  test('the data API cannot add a membership or a request around the functions', async () => {
    const mallory = await person(`mallory@${dom('outside')}`);
    const insert = await mallory.client
      .from('workspace_members')
      .insert({ workspace_id: ws, user_id: mallory.id, role: 'viewer' });
    expect(insert.error).not.toBeNull();
    const requests = await mallory.client.from('workspace_join_requests').insert({ workspace_id: ws });
    expect(requests.error).not.toBeNull();
    const internalRpc = await mallory.client.rpc('open_domain_for_caller', { workspace_id: ws });
    expect(internalRpc.error).not.toBeNull();
    expect(await memberRole(ws, mallory.id)).toBeNull();
  });

  test('the plan seat limit holds for auto-join', async () => {
    const { owner: o3, id: w3 } = await team(`boss@${dom('seats')}`, 'Seats');
    const d = await ok<Domain>(o3.client, 'add_workspace_domain', { workspace_id: w3, domain: dom('seats') });
    await ok(o3.client, 'set_workspace_domain_policy', { domain_id: d.id, policy: 'auto_join' });
    await withService(server.pool, (tx) =>
      tx
        .query(
          `insert into internal.plan_limits (plan, seats) values ('tiny', 1)
                on conflict (plan) do update set seats = 1`,
        )
        .then(() => tx.query(`update public.subscriptions set plan = 'tiny' where workspace_id = $1`, [w3])),
    );
    const dave = await person(`dave@${dom('seats')}`);
    const error = await refused(dave.client, 'join_workspace_by_domain', { workspace_id: w3 });
    expect(error.code).toBe('PT402');
    expect(await memberRole(w3, dave.id)).toBeNull();
  });
});

describe('requests to join', () => {
  let owner: SignedIn;
  let admin: SignedIn;
  let ws: string;

  beforeAll(async () => {
    ({ owner, id: ws } = await team(`ceo@${dom('req')}`, 'Request Co'));
    admin = await person(`admin@${dom('req-admin')}`);
    await withService(server.pool, (tx) =>
      tx.query(
        `insert into public.workspace_members (workspace_id, user_id, role) values ($1, $2, 'admin')`,
        [ws, admin.id],
      ),
    );
    const d = await ok<Domain>(owner.client, 'add_workspace_domain', {
      workspace_id: ws,
      domain: dom('req'),
    });
    await ok(owner.client, 'set_workspace_domain_policy', {
      domain_id: d.id,
      policy: 'request',
      join_role: 'member',
    });
  });

  async function outbox(to: string) {
    const r = await server.pool.query<{ subject: string; text_body: string; kind: string }>(
      `select kind, subject, text_body from internal.outbox where to_address = $1 order by id`,
      [to],
    );
    return r.rows;
  }

  test('a request is approved by an admin: the requester joins at the role and is told by e-mail', async () => {
    const erin = await person(`erin@${dom('req')}`);
    expect((await refused(erin.client, 'join_workspace_by_domain', { workspace_id: ws })).message).toMatch(
      /ask to join/,
    );
    const request = await ok<{ id: string; status: string }>(erin.client, 'request_to_join_workspace', {
      workspace_id: ws,
    });
    expect(request.status).toBe('pending');
    expect((await refused(erin.client, 'request_to_join_workspace', { workspace_id: ws })).code).toBe(
      'PT409',
    );
    // The owner and the admin are told, each once; the requester is not.
    const notices = await server.pool.query<{ to_address: string; subject: string; template: unknown }>(
      `select to_address, subject, template from internal.outbox
       where kind = 'join_request_received' and text_body like $1 order by to_address`,
      [`%${erin.email}%`],
    );
    expect(notices.rows.map((n) => n.to_address)).toEqual([admin.email, owner.email].sort());
    expect(notices.rows[0]!.subject).toBe(`${erin.email} asked to join Request Co`);
    expect(notices.rows[0]!.template).toMatchObject({
      layout: 'notice',
      action: { url: expect.stringMatching(/\/w\/[^/]+\/members$/) },
    });
    const [listed] = await ok<{ id: string; email: string; role: string }[]>(
      erin.client,
      'joinable_workspaces',
    );
    expect(listed).toMatchObject({ request: { id: request.id, status: 'pending' } });
    // a member cannot see or answer it
    const pending = await ok<{ id: string; email: string; role: string }[]>(
      admin.client,
      'list_join_requests',
      {
        workspace_id: ws,
      },
    );
    expect(pending).toEqual([expect.objectContaining({ id: request.id, email: erin.email, role: 'member' })]);
    const approved = await ok<{ status: string }>(admin.client, 'answer_join_request', {
      request_id: request.id,
      approve: true,
    });
    expect(approved.status).toBe('approved');
    expect(await memberRole(ws, erin.id)).toBe('member');
    expect(
      (await refused(admin.client, 'answer_join_request', { request_id: request.id, approve: false })).code,
    ).toBe('PT409');
    const mail = await outbox(erin.email);
    expect(mail).toEqual([
      expect.objectContaining({ kind: 'join_request_answered', subject: 'You have joined Request Co' }),
    ]);
    expect(mail[0]!.text_body).toContain('/w/');
    const mine = await ok<{ status: string }[]>(erin.client, 'my_join_requests');
    expect(mine[0]!.status).toBe('approved');
  });

  test('a denied request adds nobody, tells the requester, and waits a day before another', async () => {
    const frank = await person(`frank@${dom('req')}`);
    const request = await ok<{ id: string }>(frank.client, 'request_to_join_workspace', { workspace_id: ws });
    const member = await person(`member@${dom('req-member')}`);
    await withService(server.pool, (tx) =>
      tx.query(
        `insert into public.workspace_members (workspace_id, user_id, role) values ($1, $2, 'member')`,
        [ws, member.id],
      ),
    );
    expect((await refused(member.client, 'list_join_requests', { workspace_id: ws })).code).toBe('PT404');
    expect(
      (await refused(member.client, 'answer_join_request', { request_id: request.id, approve: true })).code,
    ).toBe('PT404');
    expect(
      (await refused(frank.client, 'answer_join_request', { request_id: request.id, approve: true })).code,
    ).toBe('PT404');
    await ok(owner.client, 'answer_join_request', { request_id: request.id, approve: false });
    expect(await memberRole(ws, frank.id)).toBeNull();
    const mail = await outbox(frank.email);
    expect(mail[0]!.subject).toBe('Your request to join Request Co was declined');
    const again = await refused(frank.client, 'request_to_join_workspace', { workspace_id: ws });
    expect(again.message).toMatch(/tomorrow/);
  });

  test('approval checks again that the requester still qualifies', async () => {
    const gina = await person(`gina@${dom('req')}`);
    const request = await ok<{ id: string }>(gina.client, 'request_to_join_workspace', { workspace_id: ws });
    await withService(server.pool, (tx) =>
      tx.query('update auth.users set email = $2 where id = $1', [gina.id, `gina@${dom('req-left')}`]),
    );
    const error = await refused(owner.client, 'answer_join_request', {
      request_id: request.id,
      approve: true,
    });
    expect(error.code).toBe('22023');
    expect(await memberRole(ws, gina.id)).toBeNull();
  });

  test('a requester can withdraw; the audit log has every step', async () => {
    const hal = await person(`hal@${dom('req')}`);
    const request = await ok<{ id: string }>(hal.client, 'request_to_join_workspace', { workspace_id: ws });
    const other = await person(`ivy@${dom('req')}`);
    expect((await refused(other.client, 'cancel_join_request', { request_id: request.id })).code).toBe(
      'PT404',
    );
    expect(
      (await ok<{ status: string }>(hal.client, 'cancel_join_request', { request_id: request.id })).status,
    ).toBe('cancelled');
    expect(await ok<unknown[]>(owner.client, 'list_join_requests', { workspace_id: ws })).toEqual([
      expect.objectContaining({ email: `gina@${dom('req-left')}` }),
    ]);
    const actions = await auditActions(ws);
    expect(actions).toEqual([
      'domain.added',
      'domain.verified',
      'domain.policy_changed',
      'join_request.created',
      'join_request.approved',
      'join_request.created',
      'join_request.denied',
      'join_request.created',
      'join_request.created',
      'join_request.cancelled',
    ]);
  });

  test('asking again after withdrawing does not e-mail the admins again the same day', async () => {
    const kim = await person(`kim@${dom('req')}`);
    const noticesAbout = async () =>
      (
        await server.pool.query(
          `select 1 from internal.outbox where kind = 'join_request_received' and text_body like $1`,
          [`%${kim.email}%`],
        )
      ).rowCount;
    const first = await ok<{ id: string }>(kim.client, 'request_to_join_workspace', { workspace_id: ws });
    expect(await noticesAbout()).toBe(2);
    await ok(kim.client, 'cancel_join_request', { request_id: first.id });
    const again = await ok<{ status: string }>(kim.client, 'request_to_join_workspace', { workspace_id: ws });
    expect(again.status).toBe('pending');
    expect(await noticesAbout()).toBe(2);
  });

  test('removing the domain closes it and is recorded', async () => {
    const [d] = await ok<Domain[]>(owner.client, 'list_workspace_domains', { workspace_id: ws });
    await ok(owner.client, 'remove_workspace_domain', { domain_id: d!.id });
    const jo = await person(`jo@${dom('req')}`);
    expect(await ok<unknown[]>(jo.client, 'joinable_workspaces')).toEqual([]);
    expect((await auditActions(ws)).at(-1)).toBe('domain.removed');
  });
});
