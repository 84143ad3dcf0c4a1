'use server';
// Server actions of domain auto-join (decision 0095): claim a domain (an internationalised name is
// sent as punycode), check its DNS record now, set who may join and how, remove it; join or ask to
// join a workspace; approve or deny a request. The database decides who may do each; the DNS
// lookup is the one step done here, since SQL cannot, and its finding goes to the database through
// the service's own connection.
import { domainToASCII } from 'node:url';
import { z } from 'zod';
import { FieldRefusal, runAction, runForm } from '@/app/lib/actions';
import { idField, slugField } from '@/app/lib/fields';
import type { FormState } from '@/app/lib/form-state';
import { createTxtLookup } from '@/server/domains/txt-lookup';
import { checkDomain } from '@/server/domains/verification';
import { getRuntime } from '@/server/runtime';
import type { WorkspaceDomain } from '@/app/lib/queries/domains';

const domainsPage = (slug: string) => `/w/${slug}/settings/domains`;

const addSchema = z.object({
  slug: slugField,
  workspace_id: idField,
  domain: z
    .string({ error: 'Enter a domain, e.g. acme.com' })
    .trim()
    .min(1, 'Enter a domain, e.g. acme.com')
    .max(253, 'A domain has at most 253 characters'),
});

export async function addDomainAction(_state: FormState, form: FormData): Promise<FormState> {
  const slug = String(form.get('slug') ?? '');
  return runForm(domainsPage(slug), form, addSchema, async (tx, i) => {
    // node's URL rules: lower case, IDN to punycode; '' when it cannot be a host name
    const ascii = domainToASCII(i.domain.replace(/^@/, '').replace(/\.$/, ''));
    if (!ascii) throw new FieldRefusal('domain', 'That is not a domain name');
    try {
      const r = await tx.query<{ d: WorkspaceDomain }>('select public.add_workspace_domain($1, $2) as d', [
        i.workspace_id,
        ascii,
      ]);
      const d = r.rows[0]!.d;
      return {
        notice: d.verified
          ? `${d.domain} added and verified by an owner's address`
          : d.held_elsewhere
            ? `${d.domain} added; another workspace holds it: publish its DNS record to take it over`
            : `${d.domain} added: publish its DNS record to verify it`,
      };
    } catch (error) {
      const e = error as { code?: string; message?: string };
      if (e.code === '22023' || e.code === '23505') throw new FieldRefusal('domain', e.message ?? '');
      throw error;
    }
  });
}

const policySchema = z.object({
  slug: slugField,
  domain_id: idField,
  policy: z.enum(['off', 'auto_join', 'request'], { error: 'Choose who may join' }),
  join_role: z.enum(['viewer', 'member'], { error: 'Choose a role' }),
});

export async function setDomainPolicyAction(form: FormData) {
  const slug = String(form.get('slug') ?? '');
  await runAction(domainsPage(slug), form, policySchema, async (tx, i) => {
    const r = await tx.query<{ d: WorkspaceDomain }>(
      'select public.set_workspace_domain_policy($1, $2, $3) as d',
      [i.domain_id, i.policy, i.join_role],
    );
    return { notice: `Joining by ${r.rows[0]!.d.domain} saved` };
  });
}

const domainSchema = z.object({ slug: slugField, workspace_id: idField, domain_id: idField });

export async function checkDomainAction(form: FormData) {
  const slug = String(form.get('slug') ?? '');
  await runAction(domainsPage(slug), form, domainSchema, async (tx, i) => {
    // Listing the workspace's domains as the signed-in person is what proves they administer it.
    const listed = await tx.query<{ d: WorkspaceDomain }>('select public.list_workspace_domains($1) as d', [
      i.workspace_id,
    ]);
    const d = listed.rows.map((row) => row.d).find((x) => x.id === i.domain_id);
    if (!d) throw Object.assign(new Error('Domain not found'), { code: 'PT404' });
    const { config, pool } = getRuntime();
    const me = await tx.query<{ id: string }>('select auth.uid() as id');
    const token = d.dns_record_value.slice('tenantry-verification='.length);
    const result = await checkDomain(
      pool,
      createTxtLookup({ servers: config.domainVerificationDnsServers }),
      { id: d.id, domain: d.domain, token },
      me.rows[0]?.id ?? null,
    );
    if (result.verified) return { notice: `${d.domain} is verified` };
    if (result.held_elsewhere && result.outcome === 'found') {
      return { notice: `${d.domain} is verified by another workspace's DNS record` };
    }
    if (result.outcome === 'unknown') return { notice: `DNS did not answer for ${d.domain}; try again soon` };
    return { notice: `No record found yet at ${d.dns_record_name}; DNS changes can take a while` };
  });
}

export async function removeDomainAction(form: FormData) {
  const slug = String(form.get('slug') ?? '');
  await runAction(domainsPage(slug), form, domainSchema, async (tx, i) => {
    const r = await tx.query<{ d: WorkspaceDomain }>('select public.remove_workspace_domain($1) as d', [
      i.domain_id,
    ]);
    return { notice: `${r.rows[0]!.d.domain} removed` };
  });
}

const joinSchema = z.object({ workspace_id: idField });

export async function joinWorkspaceAction(form: FormData) {
  await runAction('/workspaces', form, joinSchema, async (tx, i) => {
    const r = await tx.query<{ j: { slug: string; name: string; role: string } }>(
      'select public.join_workspace_by_domain($1) as j',
      [i.workspace_id],
    );
    const j = r.rows[0]!.j;
    return { notice: `You joined ${j.name} as ${j.role}`, redirectTo: `/w/${j.slug}` };
  });
}

export async function requestToJoinAction(form: FormData) {
  await runAction('/workspaces', form, joinSchema, async (tx, i) => {
    await tx.query('select public.request_to_join_workspace($1)', [i.workspace_id]);
    return { notice: 'Request sent: an admin will answer, and you will get an e-mail' };
  });
}

export async function cancelJoinRequestAction(form: FormData) {
  await runAction('/workspaces', form, z.object({ request_id: idField }), async (tx, i) => {
    await tx.query('select public.cancel_join_request($1)', [i.request_id]);
    return { notice: 'Request withdrawn' };
  });
}

const answerSchema = z.object({
  slug: slugField,
  request_id: idField,
  approve: z.enum(['true', 'false'], { error: 'Approve or deny' }),
});

export async function answerJoinRequestAction(form: FormData) {
  const slug = String(form.get('slug') ?? '');
  await runAction(`/w/${slug}/members`, form, answerSchema, async (tx, i) => {
    await tx.query('select public.answer_join_request($1, $2)', [i.request_id, i.approve === 'true']);
    return { notice: i.approve === 'true' ? 'Request approved: they are a member now' : 'Request denied' };
  });
}
