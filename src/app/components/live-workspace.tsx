'use client';
// In charge of a workspace page's live connection (decision 0082): one private realtime channel,
// `workspace:<id>`, that carries the workspace's changes (projects, activity, members,
// invitations) and its presence. A relevant change refreshes the page's server components
// (debounced), so paging and search stay the server's; presence shows who else is viewing the
// workspace; while the connection is down a polite "Reconnecting…" says so. When the channel says
// the viewer may have lost the workspace (their membership deleted, the channel closed or
// refused), the server decides, and sends them to their workspaces if so.
//
// The access token is the page's own short-lived one, from a server action (the session stays in
// its HttpOnly cookies); it is renewed halfway through its life and pushed to the channel.
import {
  RealtimeClient,
  type RealtimeChannel,
  type RealtimePostgresChangesPayload,
} from '@supabase/realtime-js';
import { usePathname, useRouter } from 'next/navigation';
import { useEffect, useRef, useState } from 'react';
import { checkLiveMembershipAction, liveAccessAction, liveViewersAction } from '@/app/actions/live';
import { Avatar } from '@/app/components/ui/avatar';
import { cn } from '@/app/components/ui/cn';
import { Spinner } from '@/app/components/ui/spinner';
import type { Viewer } from '@/app/lib/queries/presence';

type Table = 'projects' | 'activity_events' | 'workspace_members' | 'invitations';
const TABLES: readonly Table[] = ['projects', 'activity_events', 'workspace_members', 'invitations'];

/** Changes arriving together (a project and its activity entry) make one refresh. */
const REFRESH_DEBOUNCE_MS = 250;
/** A first connection slower than this is shown as reconnecting too. */
const FIRST_CONNECT_GRACE_MS = 4000;
/** Faces shown before "+N". */
const FACES = 3;

/** Which tables a page of the workspace shows, by its path below /w/<slug>. */
function tablesShownAt(rest: string): ReadonlySet<Table> {
  if (rest === '' || rest === '/') return new Set(['projects', 'activity_events']);
  if (rest === '/members') return new Set(['workspace_members', 'invitations']);
  return new Set();
}

export function LiveWorkspace({
  workspaceId,
  slug,
  userId,
  apiKey,
}: {
  workspaceId: string;
  slug: string;
  userId: string;
  apiKey: string;
}) {
  const router = useRouter();
  const pathname = usePathname();
  const path = useRef(pathname);
  path.current = pathname;
  const [connection, setConnection] = useState<'connecting' | 'up' | 'down'>('connecting');
  const [viewers, setViewers] = useState<Viewer[]>([]);

  useEffect(() => {
    let stopped = false;
    let access: { token: string; expiresAt: number; renewAt: number } | null = null;
    let renewTimer: ReturnType<typeof setTimeout> | undefined;
    let refreshTimer: ReturnType<typeof setTimeout> | undefined;
    let checking = false;
    const names = new Map<string, Viewer | null>();
    const graceTimer = setTimeout(() => {
      if (!stopped) setConnection((c) => (c === 'connecting' ? 'down' : c));
    }, FIRST_CONNECT_GRACE_MS);

    /** The server decides whether the viewer still belongs here; if not, it sends them away. */
    const checkMembership = () => {
      if (checking || stopped) return;
      checking = true;
      const here = `${window.location.pathname}${window.location.search}`;
      checkLiveMembershipAction(workspaceId, here)
        .catch(() => true)
        .finally(() => {
          checking = false;
        });
    };

    const token = async (): Promise<string | null> => {
      const now = Date.now() / 1000;
      if (access && now < access.renewAt) return access.token;
      const answer = await liveAccessAction(workspaceId).catch(() => null);
      if (stopped) return null;
      if (!answer) return access?.token ?? null; // the app could not be reached: try again later
      if (!answer.ok) {
        checkMembership();
        return null;
      }
      const life = answer.expiresAt - now;
      access = { token: answer.token, expiresAt: answer.expiresAt, renewAt: now + life / 2 };
      clearTimeout(renewTimer);
      renewTimer = setTimeout(() => void client.setAuth(), (life / 2) * 1000 + 500);
      return answer.token;
    };

    const client = new RealtimeClient(`${window.location.origin}/realtime/v1`, {
      params: { apikey: apiKey },
      accessToken: token,
    });

    const refreshSoon = () => {
      clearTimeout(refreshTimer);
      refreshTimer = setTimeout(() => {
        if (!stopped) router.refresh();
      }, REFRESH_DEBOUNCE_MS);
    };

    const onChange = (table: Table, change: RealtimePostgresChangesPayload<Record<string, unknown>>) => {
      if (table === 'workspace_members') {
        const row = change.eventType === 'DELETE' ? change.old : change.new;
        if (row.user_id === userId) {
          // Their own membership: gone means leave; a new role changes what every page offers.
          if (change.eventType === 'DELETE') return checkMembership();
          return refreshSoon();
        }
      }
      const rest = path.current.slice(`/w/${slug}`.length);
      if (tablesShownAt(rest).has(table)) refreshSoon();
    };

    const showViewers = async (channel: RealtimeChannel) => {
      const present = Object.keys(channel.presenceState()).filter((id) => id !== userId);
      const unknown = present.filter((id) => !names.has(id));
      if (unknown.length > 0) {
        const found = await liveViewersAction(workspaceId, unknown).catch(() => null);
        if (found === null) return;
        for (const id of unknown) names.set(id, found.find((v) => v.id === id) ?? null);
      }
      if (stopped) return;
      const now = Object.keys(channel.presenceState());
      setViewers(present.filter((id) => now.includes(id)).flatMap((id) => names.get(id) ?? []));
    };

    let channel: RealtimeChannel | null = null;
    /** Joins with a token already in hand: a join sent before the token would be refused as anonymous. */
    const join = async () => {
      if ((await token()) === null || stopped) return;
      await client.setAuth();
      if (stopped) return;
      const mine = client.channel(`workspace:${workspaceId}`, {
        config: { private: true, presence: { key: userId } },
      });
      channel = mine;
      for (const table of TABLES) {
        mine.on(
          'postgres_changes',
          { event: '*', schema: 'public', table, filter: `workspace_id=eq.${workspaceId}` },
          (change: RealtimePostgresChangesPayload<Record<string, unknown>>) => onChange(table, change),
        );
      }
      mine.on('presence', { event: 'sync' }, () => void showViewers(mine));
      mine.subscribe((status, error) => {
        if (stopped || channel !== mine) return;
        if (status === 'SUBSCRIBED') {
          clearTimeout(graceTimer);
          setConnection('up');
          void mine.track({ online_at: new Date().toISOString() });
          return;
        }
        setConnection('down');
        setViewers([]);
        if (status === 'CLOSED') {
          // The server closed the channel (a token it no longer takes, a workspace no longer
          // readable): if the viewer still belongs here, join again with a fresh token.
          access = null;
          checkMembership();
          setTimeout(() => {
            if (!stopped && channel === mine) void join();
          }, 1000);
        } else if (status === 'CHANNEL_ERROR') {
          if (error?.message.startsWith('Unauthorized')) checkMembership();
          // A rejoin after a long outage would present a lapsed token: have a fresh one ready.
          void client.setAuth();
        }
      });
    };
    void join();

    return () => {
      stopped = true;
      clearTimeout(graceTimer);
      clearTimeout(renewTimer);
      clearTimeout(refreshTimer);
      void client.removeAllChannels().finally(() => void client.disconnect());
    };
  }, [workspaceId, slug, userId, apiKey, router]);

  const shown = viewers.slice(0, FACES);
  const more = viewers.length - shown.length;
  return (
    // Set apart from the account menu's own face when there is something to show.
    <div
      className={cn(
        'flex items-center gap-2',
        (shown.length > 0 || connection === 'down') && 'mr-1 md:border-r md:pr-3',
      )}
    >
      <span role="status" className="text-xs text-muted-foreground" data-live-status="">
        {connection === 'down' ? (
          <span className="inline-flex items-center gap-1.5">
            <Spinner className="size-3.5" />
            Reconnecting…
          </span>
        ) : null}
      </span>
      {shown.length > 0 ? (
        <ul aria-label="Also viewing this workspace" className="flex -space-x-2" data-live-viewers="">
          {shown.map((v) => (
            <li key={v.id} title={v.name} className="rounded-full ring-2 ring-surface" data-viewer={v.id}>
              <Avatar name={v.name} seed={v.id} src={v.avatarUrl} className="size-7 text-[0.625rem]" />
              <span className="sr-only">{v.name}</span>
            </li>
          ))}
          {more > 0 ? (
            <li className="rounded-full ring-2 ring-surface">
              <span
                aria-hidden="true"
                className="inline-flex size-7 items-center justify-center rounded-full bg-muted text-[0.625rem] font-semibold text-foreground"
              >
                +{more}
              </span>
              <span className="sr-only">and {more} more</span>
            </li>
          ) : null}
        </ul>
      ) : null}
    </div>
  );
}
