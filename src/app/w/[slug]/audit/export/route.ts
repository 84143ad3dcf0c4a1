// GET /w/[slug]/audit/export?format=csv|json&…filters: the workspace's audit log as a file, for its
// owners and admins. The export is recorded in the log in the same transaction as the read.
import { NextResponse, type NextRequest } from 'next/server';
import { requireWorkspace } from '@/app/lib/db';
import { pageRequest } from '@/app/lib/paging';
import { auditFilters, exportAudit, formatAudit } from '@/app/lib/queries/audit';

export const dynamic = 'force-dynamic';

export async function GET(request: NextRequest, { params }: { params: Promise<{ slug: string }> }) {
  const { user, workspace } = await requireWorkspace(params, '/audit');
  const query = Object.fromEntries(request.nextUrl.searchParams);
  const format = query.format;
  if (format !== 'csv' && format !== 'json') {
    return NextResponse.json({ message: 'The format is csv or json' }, { status: 400 });
  }
  if (workspace.role !== 'admin' && workspace.role !== 'owner') {
    return NextResponse.json({ message: 'Only owners and admins export the audit log' }, { status: 403 });
  }
  const lines = await exportAudit(user, workspace.id, auditFilters(query), pageRequest(query).q, format);
  const day = new Date().toISOString().slice(0, 10);
  return new NextResponse(formatAudit(lines, format), {
    headers: {
      'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
      'content-disposition': `attachment; filename="audit-${workspace.slug}-${day}.${format}"`,
      'cache-control': 'no-store',
    },
  });
}
