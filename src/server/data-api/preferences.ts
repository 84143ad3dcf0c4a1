// In charge of the Prefer header as PostgREST reads it: return, count, resolution, missing, tx,
// handling, timezone and max-affected; which of them a request may use; and which ones the
// response's Preference-Applied repeats. Pure.
import { HttpError } from '../http/errors.js';

export type PreferenceKey =
  'resolution' | 'missing' | 'return' | 'count' | 'tx' | 'handling' | 'timezone' | 'max-affected';

export interface Preferences {
  return: 'minimal' | 'representation' | 'headers-only';
  count?: 'exact' | 'planned' | 'estimated';
  resolution?: 'merge-duplicates' | 'ignore-duplicates';
  missing: 'default' | 'null';
  /** how the transaction ends; only present when the server allows the override */
  tx?: 'commit' | 'rollback';
  handling?: 'strict' | 'lenient';
  /** a time zone name, checked against the database's list before use */
  timezone?: string;
  /** with handling=strict: an update, delete or call changing more rows than this is refused */
  maxAffected?: number;
  /** tokens not understood (or not allowed here); handling=strict refuses the request for them */
  invalid: string[];
  /** the accepted tokens as the client wrote them, for Preference-Applied */
  given: Partial<Record<PreferenceKey, string>>;
}

/** What the server allows: PostgREST's db-tx-end with its -allow-override forms. */
export interface PreferencePolicy {
  txOverride: boolean;
}

const VALUES: Partial<Record<PreferenceKey, readonly string[]>> = {
  return: ['minimal', 'representation', 'headers-only'],
  count: ['exact', 'planned', 'estimated'],
  resolution: ['merge-duplicates', 'ignore-duplicates'],
  missing: ['default', 'null'],
  tx: ['commit', 'rollback'],
  handling: ['strict', 'lenient'],
};

/** IANA-style names: letters, digits, `_+-/`; the database decides whether it knows the zone. */
const TIMEZONE = /^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/;

export function parsePrefer(
  header: string | null,
  policy: PreferencePolicy = { txOverride: false },
): Preferences {
  const prefer: Preferences = { return: 'minimal', missing: 'null', invalid: [], given: {} };
  if (!header) return prefer;
  for (const token of header
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)) {
    const eq = token.indexOf('=');
    const key = (eq < 0 ? token : token.slice(0, eq)).trim() as PreferenceKey;
    const value = eq < 0 ? '' : token.slice(eq + 1).trim();
    // The first occurrence of a preference wins, as in PostgREST.
    if (prefer.given[key] !== undefined) continue;
    if (!accept(prefer, key, value, policy)) {
      prefer.invalid.push(token);
      continue;
    }
    prefer.given[key] = `${key}=${value}`;
  }
  if (prefer.handling === 'strict' && prefer.invalid.length > 0) {
    throw new HttpError(400, 'Invalid preferences given with handling=strict', {
      code: 'PGRST122',
      details: `Invalid preferences: ${prefer.invalid.join(', ')}`,
    });
  }
  return prefer;
}

function accept(prefer: Preferences, key: PreferenceKey, value: string, policy: PreferencePolicy): boolean {
  if (key === 'timezone') {
    if (!TIMEZONE.test(value)) return false;
    prefer.timezone = value;
    return true;
  }
  if (key === 'max-affected') {
    if (!/^\d{1,9}$/.test(value)) return false;
    prefer.maxAffected = Number(value);
    return true;
  }
  const allowed = VALUES[key];
  if (!allowed || !allowed.includes(value)) return false;
  if (key === 'tx' && !policy.txOverride) return false;
  (prefer as unknown as Record<string, string>)[key] = value;
  return true;
}

/**
 * count=planned and count=estimated answered with an exact count. The planner's estimates come
 * from statistics over every row of a table, whoever may read them: under row-level security
 * they would tell a tenant how many rows the whole installation holds and its common values.
 * An exact count runs under the caller's policies and counts only what the caller may see.
 */
export function exactCountOnly(prefer: Preferences): Preferences {
  if (prefer.count !== 'planned' && prefer.count !== 'estimated') return prefer;
  return { ...prefer, count: 'exact', given: { ...prefer.given, count: 'count=exact' } };
}

/** A time zone the database does not know: ignored, or under handling=strict refused. */
export function dropUnknownTimezone(prefer: Preferences): Preferences {
  const token = prefer.given.timezone ?? '';
  if (prefer.handling === 'strict') {
    throw new HttpError(400, 'Invalid preferences given with handling=strict', {
      code: 'PGRST122',
      details: `Invalid preferences: ${token}`,
    });
  }
  const given = { ...prefer.given };
  delete given.timezone;
  const dropped: Preferences = { ...prefer, given, invalid: [...prefer.invalid, token] };
  delete dropped.timezone;
  return dropped;
}

export type RequestKind = 'read' | 'create' | 'update' | 'delete' | 'call';

/** PostgREST's order, and which preferences each kind of request echoes. */
const ECHOED: Record<RequestKind, PreferenceKey[]> = {
  read: ['count', 'tx', 'handling', 'timezone'],
  create: ['resolution', 'missing', 'return', 'count', 'tx', 'handling', 'timezone'],
  update: ['missing', 'return', 'count', 'tx', 'handling', 'timezone', 'max-affected'],
  delete: ['return', 'count', 'tx', 'handling', 'timezone', 'max-affected'],
  call: ['count', 'tx', 'handling', 'timezone', 'max-affected'],
};

/** The Preference-Applied value, or null when nothing applied. */
export function appliedPreferences(prefer: Preferences, kind: RequestKind): string | null {
  const tokens = ECHOED[kind]
    // max-affected only takes effect (and so is only echoed) with handling=strict.
    .filter((key) => key !== 'max-affected' || prefer.handling === 'strict')
    .map((key) => prefer.given[key])
    .filter((t): t is string => t !== undefined);
  return tokens.length > 0 ? tokens.join(', ') : null;
}
