// In charge of the operator console's audit log (decision 0096): every workspace's lines and the
// account events together, filtered like a workspace's log (action, actor, dates, search: the
// same auditFilters, describeAudit and formatAudit) plus a workspace and "operator actions only",
// a page at a time or as an export that is recorded in the same transaction.
import { paged, pageWindow, type PageRequest, type Paged } from '@/app/lib/paging';
import {
  AUDIT_EXPORT_MAX_ROWS,
  auditConditions,
  auditFilters,
  toAuditLine,
  type AuditFilters,
  type AuditLine,
  type AuditRow,
} from '@/app/lib/queries/audit';
import type { Tx } from '@/server/db/transactions';
import { exportAuditLines, type Operator } from '@/server/operator/actions';
import { getRuntime } from '@/server/runtime';

export const OPERATOR_AUDIT_PAGE_SIZE = 50;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface OperatorAuditFilters extends AuditFilters {
  /** a workspace id, '' for all */
  workspace: string;
  /** only the console's own lines */
  operatorOnly: boolean;
}

type Params = Record<string, string | string[] | undefined>;
const first = (v: string | string[] | undefined): string => (Array.isArray(v) ? (v[0] ?? '') : (v ?? ''));

export function operatorAuditFilters(params: Params): OperatorAuditFilters {
  const workspace = first(params.workspace).trim();
  return {
    ...auditFilters(params),
    workspace: UUID.test(workspace) ? workspace : '',
    operatorOnly: first(params.operator) === '1',
  };
}

interface Row extends AuditRow {
  workspace_id: string | null;
}

export interface OperatorAuditLine extends AuditLine {
  workspaceId: string | null;
}

const toLine = (r: Row): OperatorAuditLine => ({ ...toAuditLine(r), workspaceId: r.workspace_id });

function whereFor(filters: OperatorAuditFilters, q: string): { sql: string; values: unknown[] } {
  const parts: string[] = ['true'];
  const values: unknown[] = [];
  const add = (sql: (n: string) => string, value: unknown) => {
    values.push(value);
    parts.push(sql(`$${values.length}`));
  };
  if (filters.workspace) add((n) => `e.workspace_id = ${n}::uuid`, filters.workspace);
  if (filters.operatorOnly) parts.push(`e.details ? 'operator'`);
  const shared = auditConditions(filters, q, 'u.email', values.length);
  return { sql: [...parts, ...shared.parts].join(' and '), values: [...values, ...shared.values] };
}

const SELECT = `select e.id, e.created_at, e.action, e.actor_id, e.actor_type, u.email as actor_email,
    e.user_id, e.target_type, e.target_id, host(e.ip_address) as ip_address, e.user_agent, e.details,
    e.workspace_id
  from public.audit_events e left join auth.users u on u.id = e.actor_id`;

export async function operatorAuditPage(
  filters: OperatorAuditFilters,
  request: PageRequest,
): Promise<Paged<OperatorAuditLine>> {
  const { limit, offset } = pageWindow(request, OPERATOR_AUDIT_PAGE_SIZE);
  const where = whereFor(filters, request.q);
  const n = where.values.length;
  const result = await getRuntime().pool.query<Row>(
    `${SELECT} where ${where.sql} order by e.created_at desc, e.id desc limit $${n + 1} offset $${n + 2}`,
    [...where.values, limit, offset],
  );
  return paged(result.rows.map(toLine), request, OPERATOR_AUDIT_PAGE_SIZE);
}

export function exportOperatorAudit(
  operator: Operator,
  filters: OperatorAuditFilters,
  q: string,
  format: 'csv' | 'json',
): Promise<OperatorAuditLine[]> {
  const where = whereFor(filters, q);
  const n = where.values.length;
  return exportAuditLines(getRuntime().pool, operator, format, async (tx: Tx) => {
    const result = await tx.query<Row>(
      `${SELECT} where ${where.sql} order by e.created_at desc, e.id desc limit $${n + 1}`,
      [...where.values, AUDIT_EXPORT_MAX_ROWS],
    );
    return result.rows.map(toLine);
  });
}
