// In charge of policies that compute, for every row, what is the same for the whole statement. A
// call of auth.uid(), auth.jwt(), auth.role(), auth.email(), current_setting() or
// tenantry.workspace_ids() outside a sub-select is evaluated per row; inside one that does not
// mention the row, PostgreSQL evaluates it once (an InitPlan). tenantry.role(), is_member() and
// has_role() take the row's workspace, so each row costs a security definer call: the array of
// tenantry.workspace_ids() in a sub-select answers the same once (decision 0060).
import { calls, evaluatedOnce, parseExpression, type Call } from '../expression.js';
import type { Finding, Rule } from '../finding.js';
import { expressionsOf, policyObject, readPolicies, type Policy } from '../policies.js';

const ONCE_PER_STATEMENT = new Set([
  'auth.uid',
  'auth.jwt',
  'auth.role',
  'auth.email',
  'tenantry.workspace_ids',
]);
const UNQUALIFIED_ONCE = new Set(['current_setting']);
const TENANCY_PER_ROW = new Set(['tenantry.role', 'tenantry.is_member', 'tenantry.has_role']);

function nameOf(call: Call): string {
  return call.schema ? `${call.schema}.${call.name}` : call.name;
}

/** The calls of the policy, in either clause, that match and run once per row; names in order, once. */
function perRowCalls(policy: Policy, matches: (call: Call) => boolean): string[] {
  const found = new Set<string>();
  for (const { text } of expressionsOf(policy)) {
    const expression = parseExpression(text);
    for (const call of calls(expression)) {
      if (!matches(call) || evaluatedOnce(expression, call, policy.table)) continue;
      const noArguments = expression.tokens[call.at + 2]?.text === ')';
      found.add(`${nameOf(call)}(${noArguments ? '' : '…'})`);
    }
  }
  return [...found];
}

export const authRlsInitplan: Rule = {
  id: 'auth_rls_initplan',
  level: 'WARN',
  what: 'A policy calls auth.uid(), auth.jwt(), auth.role(), auth.email(), current_setting() or tenantry.workspace_ids() outside a sub-select (or in one that mentions the row), so it is evaluated for every row instead of once per statement.',
  fix: 'Wrap the call in a sub-select, e.g. (select auth.uid()), so PostgreSQL evaluates it once.',
  async check(context) {
    const findings: Finding[] = [];
    for (const policy of await readPolicies(context)) {
      if (!policy.rlsEnabled) continue;
      const found = perRowCalls(
        policy,
        (call) =>
          ONCE_PER_STATEMENT.has(nameOf(call)) ||
          ((call.schema === '' || call.schema === 'pg_catalog') && UNQUALIFIED_ONCE.has(call.name)),
      );
      if (found.length === 0) continue;
      findings.push({
        id: this.id,
        level: this.level,
        object: policyObject(policy),
        detail: `Policy ${policy.name} on ${policy.qualifiedTable} evaluates ${found.join(', ')} for every row.`,
        fix: `Write ${found.map((call) => `(select ${call})`).join(', ')} instead, each in a sub-select of its own, so it is evaluated once per statement.`,
      });
    }
    return findings;
  },
};

export const tenancyCheckPerRow: Rule = {
  id: 'tenancy_check_per_row',
  level: 'WARN',
  what: 'A policy calls tenantry.role(), tenantry.is_member() or tenantry.has_role() with the row’s workspace: a security definer call for every row, which PostgreSQL cannot inline or turn into an index condition.',
  fix: 'Compare the row’s workspace with the array: workspace_id = any ((select tenantry.workspace_ids(min_role))::uuid[]).',
  async check(context) {
    const findings: Finding[] = [];
    for (const policy of await readPolicies(context)) {
      if (!policy.rlsEnabled) continue;
      const found = perRowCalls(policy, (call) => TENANCY_PER_ROW.has(nameOf(call)));
      if (found.length === 0) continue;
      findings.push({
        id: this.id,
        level: this.level,
        object: policyObject(policy),
        detail: `Policy ${policy.name} on ${policy.qualifiedTable} calls ${found.join(', ')} once per row.`,
        fix: `Write workspace_id = any ((select tenantry.workspace_ids('<min role>'))::uuid[]) instead of ${found.join(', ')}: one call per statement, and an index condition.`,
      });
    }
    return findings;
  },
};
