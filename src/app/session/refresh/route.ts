// GET /session/refresh?next=/path: exchanges the refresh token for a new session (rotating it)
// and returns to the page; a revoked or expired session is cleared and sent to sign in.
import { NextResponse, type NextRequest } from 'next/server';
import { requestContext } from '@/app/lib/client';
import { readStoredSession, safeNext, services, storeSession } from '@/app/lib/session';

export const dynamic = 'force-dynamic';

export async function GET(request: NextRequest) {
  const next = safeNext(request.nextUrl.searchParams.get('next'));
  const { config, identity } = services();
  const session = await readStoredSession();
  if (session) {
    try {
      const fresh = await identity.refreshGrant(session.refresh_token, await requestContext());
      await storeSession(fresh);
      return NextResponse.redirect(new URL(next, config.appUrl), 303);
    } catch {
      // fall through: the session is over
    }
  }
  await storeSession(null);
  return NextResponse.redirect(new URL(`/sign-in?next=${encodeURIComponent(next)}`, config.appUrl), 303);
}
