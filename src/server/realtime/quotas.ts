// In charge of realtime's bounds per user and per workspace: sockets, channel joins per second,
// broadcasts per second and presence calls (per second, per channel window, state size). A user
// is a token's subject (anonymous callers by their address); a workspace is the one a channel
// belongs to: its topic's, or the one its postgres_changes are filtered to by the tables' workspace
// column. Each counter lives in this process: a socket lives on one instance (decision 0085).
import type { RealtimeConfig } from '../config.js';
import type { Caller } from '../identity/caller.js';
import type { PostgresBinding } from './postgres-changes.js';
import type { Channel } from './topics.js';

/** Supabase's words for each refusal. */
export const TOO_MANY_CONNECTIONS = 'ConnectionRateLimitReached: Too many connected users';
export const TOO_MANY_JOINS = 'ClientJoinRateLimitReached: Too many joins per second';
export const TOO_MANY_MESSAGES = 'Too many messages per second';
export const TOO_MANY_PRESENCE = 'Too many presence messages per second';
export const CLIENT_PRESENCE_RATE = 'Client presence rate limit exceeded';
export const TRACK_TOO_LARGE = 'Track message size exceeded';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const WORKSPACE_TOPIC = new RegExp(`^workspace:(${UUID})(?::|$)`, 'i');
const EQUALS_UUID = new RegExp(`^(\\w+)=eq\\.(${UUID})$`, 'i');
/** The column the product scopes its tables by, for a table the catalog has not read yet. */
const WORKSPACE_COLUMN = 'workspace_id';

/** A table's workspace column: null when it has none, undefined when the table is not known yet. */
export type ScopeOf = (schema: string, table: string) => string | null | undefined;

/** The workspace a topic belongs to: `workspace:<id>`, alone or followed by `:<anything>`. */
export function workspaceOfTopic(name: string): string | null {
  return WORKSPACE_TOPIC.exec(name)?.[1]?.toLowerCase() ?? null;
}

/**
 * The workspace a channel belongs to: its topic's (`workspace:<id>`), else the one every one of its
 * postgres_changes bindings is filtered to (`<workspace column>=eq.<id>`), else none.
 */
export function workspaceOfChannel(
  name: string,
  bindings: PostgresBinding[],
  scopeOf: ScopeOf,
): string | null {
  const byTopic = workspaceOfTopic(name);
  if (byTopic !== null || bindings.length === 0) return byTopic;
  let found: string | null = null;
  for (const binding of bindings) {
    const match = typeof binding.filter === 'string' ? EQUALS_UUID.exec(binding.filter) : null;
    if (!match || !binding.table) return null;
    const scope = scopeOf(binding.schema, binding.table);
    if (match[1] !== (scope === undefined ? WORKSPACE_COLUMN : scope)) return null;
    const workspace = match[2]!.toLowerCase();
    if (found !== null && found !== workspace) return null;
    found = workspace;
  }
  return found;
}

/** Who a channel's limits count against: the token's subject, else the key's role by address. */
export function userKey(caller: Caller, address: string): string {
  if (caller.kind === 'user') return `user:${caller.claims.sub}`;
  return `${caller.kind}:${address}`;
}

/** Counts per key in fixed windows; a burst across a window's edge is harmless here. */
export class WindowCounts {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs = 1000,
  ) {}

  /** Counts one for `key`; false once the key is over its limit in this window. */
  take(key: string, now = Date.now()): boolean {
    let window = this.windows.get(key);
    if (!window || now - window.start >= this.windowMs) {
      // Keys seen once stay until enough pile up to be worth a sweep.
      if (!window && this.windows.size >= 10_000) this.prune(now);
      window = { start: now, count: 0 };
      this.windows.set(key, window);
    }
    window.count += 1;
    return window.count <= this.limit;
  }

  private prune(now: number): void {
    for (const [key, window] of this.windows) {
      if (now - window.start >= this.windowMs) this.windows.delete(key);
    }
  }
}

/** Sockets holding channels per key: a socket counts once however many channels it has there. */
class Holders {
  private readonly byKey = new Map<string, Map<object, number>>();

  constructor(private readonly max: number) {}

  admits(key: string, socket: object): boolean {
    const held = this.byKey.get(key);
    return !held || held.has(socket) || held.size < this.max;
  }

  add(key: string, socket: object): void {
    let held = this.byKey.get(key);
    if (!held) {
      held = new Map();
      this.byKey.set(key, held);
    }
    held.set(socket, (held.get(socket) ?? 0) + 1);
  }

  remove(key: string, socket: object): void {
    const held = this.byKey.get(key);
    const count = held?.get(socket);
    if (!held || count === undefined) return;
    if (count > 1) held.set(socket, count - 1);
    else held.delete(socket);
    if (held.size === 0) this.byKey.delete(key);
  }
}

/** What a channel counts against, fixed at its join (a later token does not move it). */
interface Counted {
  socket: object;
  user: string;
  workspace: string | null;
  presence: { start: number; count: number };
}

export class Quotas {
  private readonly userSockets: Holders;
  private readonly workspaceSockets: Holders;
  private readonly userJoins: WindowCounts;
  private readonly workspaceJoins: WindowCounts;
  private readonly userMessages: WindowCounts;
  private readonly workspaceMessages: WindowCounts;
  private readonly userPresence: WindowCounts;
  private readonly workspacePresence: WindowCounts;
  private readonly counted = new WeakMap<Channel, Counted>();

  constructor(
    private readonly limits: RealtimeConfig,
    private readonly scopeOf: ScopeOf = () => undefined,
  ) {
    this.userSockets = new Holders(limits.maxConnectionsPerUser);
    this.workspaceSockets = new Holders(limits.maxConnectionsPerWorkspace);
    this.userJoins = new WindowCounts(limits.maxJoinsPerSecondPerUser);
    this.workspaceJoins = new WindowCounts(limits.maxJoinsPerSecondPerWorkspace);
    this.userMessages = new WindowCounts(limits.maxMessagesPerSecondPerUser);
    this.workspaceMessages = new WindowCounts(limits.maxMessagesPerSecondPerWorkspace);
    this.userPresence = new WindowCounts(limits.maxPresencePerSecondPerUser);
    this.workspacePresence = new WindowCounts(limits.maxPresencePerSecondPerWorkspace);
  }

  /** Counts a join attempt; Supabase's refusal when the user or the workspace is over its rate. */
  join(name: string, bindings: PostgresBinding[], caller: Caller, address: string): string | null {
    const workspace = workspaceOfChannel(name, bindings, this.scopeOf);
    // Both are counted: a refused user's attempts still weigh on the workspace, as on Supabase.
    const userOk = this.userJoins.take(userKey(caller, address));
    const workspaceOk = workspace === null || this.workspaceJoins.take(workspace);
    return userOk && workspaceOk ? null : TOO_MANY_JOINS;
  }

  /**
   * Registers a channel against its user's and workspace's sockets, or refuses it when the socket
   * would be one too many for either. Synchronous with the channel's registration, so concurrent
   * joins cannot both take the last place.
   */
  attach(socket: object, channel: Channel, bindings: PostgresBinding[], address: string): string | null {
    const user = userKey(channel.caller.caller, address);
    const workspace = workspaceOfChannel(channel.name, bindings, this.scopeOf);
    if (!this.userSockets.admits(user, socket)) return TOO_MANY_CONNECTIONS;
    if (workspace !== null && !this.workspaceSockets.admits(workspace, socket)) return TOO_MANY_CONNECTIONS;
    this.userSockets.add(user, socket);
    if (workspace !== null) this.workspaceSockets.add(workspace, socket);
    this.counted.set(channel, { socket, user, workspace, presence: { start: 0, count: 0 } });
    return null;
  }

  detach(channel: Channel): void {
    const counted = this.counted.get(channel);
    if (!counted) return;
    this.counted.delete(channel);
    this.userSockets.remove(counted.user, counted.socket);
    if (counted.workspace !== null) this.workspaceSockets.remove(counted.workspace, counted.socket);
  }

  /** Counts a broadcast from the channel; false when its user or workspace is over the rate. */
  message(channel: Channel): boolean {
    const counted = this.counted.get(channel);
    if (!counted) return true;
    const userOk = this.userMessages.take(counted.user);
    const workspaceOk = counted.workspace === null || this.workspaceMessages.take(counted.workspace);
    return userOk && workspaceOk;
  }

  /**
   * Counts a presence call (`stateBytes` for a track): the reason the channel is shut down with,
   * or null. The channel's own window is checked first, as Supabase does.
   */
  presence(channel: Channel, stateBytes: number | null, now = Date.now()): string | null {
    const counted = this.counted.get(channel);
    if (!counted) return null;
    const window = counted.presence;
    if (now - window.start >= this.limits.presenceWindowMs) {
      window.start = now;
      window.count = 0;
    }
    if (window.count >= this.limits.presenceCallsPerWindow) return CLIENT_PRESENCE_RATE;
    window.count += 1;
    const userOk = this.userPresence.take(counted.user, now);
    const workspaceOk = counted.workspace === null || this.workspacePresence.take(counted.workspace, now);
    if (!userOk || !workspaceOk) return TOO_MANY_PRESENCE;
    if (stateBytes !== null && stateBytes > this.limits.maxPresenceBytes) return TRACK_TOO_LARGE;
    return null;
  }
}
