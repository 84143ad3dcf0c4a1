// GET /admin/audit/export?format=csv|json&…filters: the whole installation's audit log as a file,
// for staff with a second-factor session (404 for anyone else). The export is itself a line of the
// log, written in the same transaction as the read.
import { NextResponse, type NextRequest } from 'next/server';
import { requireOperator } from '@/app/lib/operator';
import { pageRequest } from '@/app/lib/paging';
import { formatAudit } from '@/app/lib/queries/audit';
import { exportOperatorAudit, operatorAuditFilters } from '@/app/lib/queries/operator-audit';

export const dynamic = 'force-dynamic';

export async function GET(request: NextRequest) {
  const { operator } = await requireOperator('/admin/audit');
  const query = Object.fromEntries(request.nextUrl.searchParams);
  const format = query.format;
  if (format !== 'csv' && format !== 'json') {
    return NextResponse.json({ message: 'The format is csv or json' }, { status: 400 });
  }
  const lines = await exportOperatorAudit(
    operator,
    operatorAuditFilters(query),
    pageRequest(query).q,
    format,
  );
  const day = new Date().toISOString().slice(0, 10);
  return new NextResponse(formatAudit(lines, format), {
    headers: {
      'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
      'content-disposition': `attachment; filename="audit-all-${day}.${format}"`,
      'cache-control': 'no-store',
    },
  });
}
