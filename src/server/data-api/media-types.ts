// In charge of media types: which representation the Accept header asks for (JSON array or
// object, with or without nulls, CSV, or the query plan), which one a body is written in, and
// reading CSV bodies into rows. Pure.
import { HttpError } from '../http/errors.js';

export type DataMedia = { kind: 'json'; single: boolean; stripNulls: boolean } | { kind: 'csv' };

export type OutputMedia =
  | DataMedia
  | {
      kind: 'plan';
      format: 'text' | 'json';
      /** the representation whose statement is explained */
      target: DataMedia;
      options: PlanOption[];
    };

export const PLAN_OPTIONS = ['analyze', 'verbose', 'settings', 'buffers', 'wal'] as const;
export type PlanOption = (typeof PLAN_OPTIONS)[number];

interface MediaRange {
  type: string;
  params: Map<string, string>;
  q: number;
}

function parseRanges(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of header.split(',')) {
    const [rawType, ...rawParams] = part.split(';');
    const type = rawType!.trim().toLowerCase();
    const params = new Map<string, string>();
    for (const p of rawParams) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const value = p
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      params.set(p.slice(0, eq).trim().toLowerCase(), value);
    }
    const q = params.has('q') ? Number(params.get('q')) : 1;
    ranges.push({ type, params, q: Number.isFinite(q) ? q : 0 });
  }
  // Highest preference first; equal ones keep the client's order.
  return ranges.filter((r) => r.q > 0).sort((a, b) => b.q - a.q);
}

const JSON_TYPES = new Set(['application/json', 'application/*', '*/*', 'text/*', '']);

function dataMedia(range: MediaRange): DataMedia | null {
  const stripNulls = range.params.get('nulls') === 'stripped';
  if (range.type === 'application/vnd.pgrst.object+json' || range.type === 'application/vnd.pgrst.object') {
    return { kind: 'json', single: true, stripNulls };
  }
  if (range.type === 'application/vnd.pgrst.array+json' || range.type === 'application/vnd.pgrst.array') {
    return { kind: 'json', single: false, stripNulls };
  }
  if (JSON_TYPES.has(range.type)) return { kind: 'json', single: false, stripNulls: false };
  if (range.type === 'text/csv') return { kind: 'csv' };
  return null;
}

function planMedia(range: MediaRange): OutputMedia | null {
  const match = /^application\/vnd\.pgrst\.plan(?:\+(json|text))?$/.exec(range.type);
  if (!match) return null;
  const forType = range.params.get('for');
  const target = forType === undefined ? { kind: 'json' as const, single: false, stripNulls: false } : null;
  const resolved = target ?? dataMedia({ type: forType!.toLowerCase(), params: new Map(), q: 1 });
  if (!resolved) return null;
  const options = (range.params.get('options') ?? '')
    .split('|')
    .map((o) => o.trim().toLowerCase())
    .filter(Boolean);
  if (!options.every((o): o is PlanOption => (PLAN_OPTIONS as readonly string[]).includes(o))) return null;
  return { kind: 'plan', format: match[1] === 'json' ? 'json' : 'text', target: resolved, options };
}

/**
 * The representation to answer in: the first acceptable type in the client's order of
 * preference; none acceptable is 406 PGRST107. Plans are offered only when the server allows them.
 */
export function negotiate(accept: string | null, options: { planEnabled: boolean }): OutputMedia {
  if (!accept || accept.trim() === '') return { kind: 'json', single: false, stripNulls: false };
  for (const range of parseRanges(accept)) {
    const media = dataMedia(range) ?? (options.planEnabled ? planMedia(range) : null);
    if (media) return media;
  }
  // GeoJSON (application/geo+json) needs PostGIS, which this service does not ship with.
  throw new HttpError(406, `None of these media types are available: ${accept.slice(0, 200)}`, {
    code: 'PGRST107',
  });
}

/** The media type a request body is written in (the Content-Type without parameters). */
export function bodyMediaType(contentType: string | null): string {
  return (contentType ?? 'application/json').split(';')[0]!.trim().toLowerCase() || 'application/json';
}

/**
 * RFC 4180 CSV: a header line of column names, then one line per row. Quoted fields may hold
 * commas, quotes (doubled) and line breaks. An unquoted NULL is SQL NULL, as in PostgREST; every
 * other value is text that the database converts to the column's type.
 */
export function parseCsv(text: string): Record<string, string | null>[] {
  const records: { value: string; quoted: boolean }[][] = [];
  let record: { value: string; quoted: boolean }[] = [];
  let field = '';
  let quoted = false;
  let inQuotes = false;
  let i = 0;
  const endField = () => {
    record.push({ value: field, quoted });
    field = '';
    quoted = false;
  };
  const endRecord = () => {
    endField();
    records.push(record);
    record = [];
  };
  while (i < text.length) {
    const ch = text[i]!;
    if (inQuotes) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (ch === '"') inQuotes = false;
      else field += ch;
      i += 1;
      continue;
    }
    if (ch === '"' && field === '' && !quoted) {
      inQuotes = true;
      quoted = true;
    } else if (ch === ',') endField();
    else if (ch === '\n' || ch === '\r') {
      endRecord();
      if (ch === '\r' && text[i + 1] === '\n') i += 1;
    } else if (quoted) {
      throw csvError(`Unexpected character after a quoted field on line ${records.length + 1}`);
    } else field += ch;
    i += 1;
  }
  if (inQuotes) throw csvError('A quoted field is not closed');
  if (field !== '' || quoted || record.length > 0) endRecord();
  const nonEmpty = records.filter((r) => !(r.length === 1 && r[0]!.value === '' && !r[0]!.quoted));
  if (nonEmpty.length === 0) throw csvError('The CSV body has no header line');
  const header = nonEmpty[0]!.map((f) => f.value);
  if (new Set(header).size !== header.length) throw csvError('The CSV header names a column twice');
  return nonEmpty.slice(1).map((r, index) => {
    if (r.length !== header.length) {
      throw csvError(`Line ${index + 2} has ${r.length} fields; the header has ${header.length}`);
    }
    const row: Record<string, string | null> = {};
    header.forEach((name, k) => {
      const f = r[k]!;
      row[name] = !f.quoted && f.value === 'NULL' ? null : f.value;
    });
    return row;
  });
}

function csvError(details: string): HttpError {
  return new HttpError(400, 'Could not parse the CSV body', { code: 'PGRST102', details });
}
