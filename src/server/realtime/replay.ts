// In charge of a join's `broadcast.replay` request as realtime-js sends it ({since, limit}): which
// stored broadcasts a private channel asks to hear again, or Supabase's refusal. Pure; the
// replay itself is sent by messages.ts once the join is answered.
import { isRecord } from './protocol.js';

/** Messages replayed when the join names no limit. */
export const REPLAY_DEFAULT_LIMIT = 10;
/** The most messages one join may have replayed (Supabase's hard limit). */
export const REPLAY_MAX_LIMIT = 25;

export interface Replay {
  /** ms since the epoch: messages stored at or after this time */
  since: number;
  /** how many of the newest such messages, at most */
  limit: number;
}

export type ReplayRequest = { replay: Replay | null } | { refusal: string };

/** The join's replay request: none, one to run, or the reason it is refused. */
export function replayRequest(broadcastConfig: Record<string, unknown>, isPrivate: boolean): ReplayRequest {
  const raw = broadcastConfig.replay;
  if (raw === undefined || raw === null) return { replay: null };
  if (!isPrivate) return { refusal: 'UnableToReplayMessages: Replay is not allowed for public channels' };
  const invalid = { refusal: 'UnableToReplayMessages: Replay params are not valid' };
  if (!isRecord(raw)) return invalid;
  const { since, limit } = raw;
  if (typeof since !== 'number' || !Number.isSafeInteger(since) || since < 0) return invalid;
  if (limit !== undefined && limit !== null && (typeof limit !== 'number' || !Number.isSafeInteger(limit)))
    return invalid;
  const asked = typeof limit === 'number' ? limit : REPLAY_DEFAULT_LIMIT;
  // As on Supabase: a limit is brought within 1..25 rather than refused.
  return { replay: { since, limit: Math.max(1, Math.min(REPLAY_MAX_LIMIT, asked)) } };
}
