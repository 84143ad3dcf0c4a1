// In charge of the realtime wire format, as realtime-js speaks it: Phoenix messages as JSON objects
// (vsn 1.0.0) or JSON arrays (vsn 2.0.0), and 2.0.0's binary broadcast frames (kind 3 from the
// client, kind 4 to it). Pure: bytes in, messages out, and back; nothing here knows a socket.

export type Vsn = '1.0.0' | '2.0.0';

export interface Message {
  joinRef: string | null;
  ref: string | null;
  topic: string;
  event: string;
  payload: unknown;
}

/** A broadcast's user payload: JSON, or bytes (2.0.0's binary encoding). */
export type BroadcastBody = { kind: 'json'; value: unknown } | { kind: 'binary'; bytes: Buffer };

/** A client's broadcast push, whichever framing carried it. */
export interface BroadcastPush {
  joinRef: string | null;
  ref: string | null;
  topic: string;
  event: string;
  body: BroadcastBody;
  /** the user payload's size in bytes, as it came */
  size: number;
}

export type Incoming = { kind: 'message'; message: Message } | { kind: 'broadcast'; push: BroadcastPush };

export class ProtocolError extends Error {
  override name = 'ProtocolError';
}

const KIND_USER_BROADCAST_PUSH = 3;
const KIND_USER_BROADCAST = 4;
const ENCODING_BINARY = 0;
const ENCODING_JSON = 1;

/** The vsn query parameter: absent means 1.0.0, as on Supabase; anything else is refused. */
export function parseVsn(value: string | null): Vsn | null {
  if (value === null || value === '' || value === '1.0.0') return '1.0.0';
  if (value === '2.0.0') return '2.0.0';
  return null;
}

function refOf(value: unknown, what: string): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new ProtocolError(`${what} must be a string or null`);
}

function fromParts(
  joinRef: unknown,
  ref: unknown,
  topic: unknown,
  event: unknown,
  payload: unknown,
): Incoming {
  if (typeof topic !== 'string' || typeof event !== 'string') {
    throw new ProtocolError('a message needs a topic and an event');
  }
  const message: Message = {
    joinRef: refOf(joinRef, 'join_ref'),
    ref: refOf(ref, 'ref'),
    topic,
    event,
    payload: payload ?? {},
  };
  // A 1.0.0 client (and a 2.0.0 one whose payload is not a user broadcast) sends broadcasts as JSON.
  if (event === 'broadcast' && isRecord(payload) && typeof payload.event === 'string') {
    const value = payload.payload ?? {};
    const size = Buffer.byteLength(JSON.stringify(value));
    return {
      kind: 'broadcast',
      push: { ...message, event: payload.event, body: { kind: 'json', value }, size },
    };
  }
  return { kind: 'message', message };
}

/** Reads a text frame in the socket's framing. */
export function decodeText(text: string, vsn: Vsn): Incoming {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ProtocolError('a text frame must be JSON');
  }
  if (vsn === '2.0.0') {
    if (!Array.isArray(parsed) || parsed.length !== 5) {
      throw new ProtocolError('a 2.0.0 message is [join_ref, ref, topic, event, payload]');
    }
    const [joinRef, ref, topic, event, payload] = parsed as unknown[];
    return fromParts(joinRef, ref, topic, event, payload);
  }
  if (!isRecord(parsed)) throw new ProtocolError('a 1.0.0 message is {topic, event, payload, ref, join_ref}');
  return fromParts(parsed.join_ref, parsed.ref, parsed.topic, parsed.event, parsed.payload);
}

/** Reads a binary frame: only 2.0.0's user broadcast push (kind 3) is one a client sends. */
export function decodeBinary(frame: Buffer, vsn: Vsn): Incoming {
  if (vsn !== '2.0.0') throw new ProtocolError('binary frames need vsn 2.0.0');
  if (frame.length < 7 || frame[0] !== KIND_USER_BROADCAST_PUSH) {
    throw new ProtocolError('the only binary frame a client sends is a user broadcast push (kind 3)');
  }
  const [joinRefLen, refLen, topicLen, eventLen, metaLen, encoding] = frame.subarray(1, 7);
  if (encoding !== ENCODING_BINARY && encoding !== ENCODING_JSON) {
    throw new ProtocolError('unknown payload encoding');
  }
  let offset = 7;
  const take = (length: number): string => {
    if (offset + length > frame.length)
      throw new ProtocolError('a binary frame is shorter than its header says');
    const text = frame.toString('utf8', offset, offset + length);
    offset += length;
    return text;
  };
  const joinRef = take(joinRefLen!);
  const ref = take(refLen!);
  const topic = take(topicLen!);
  const event = take(eventLen!);
  take(metaLen!); // metadata keys the client chose to send; nothing reads them yet
  const bytes = frame.subarray(offset);
  let body: BroadcastBody;
  if (encoding === ENCODING_JSON) {
    try {
      body = { kind: 'json', value: JSON.parse(bytes.toString('utf8')) as unknown };
    } catch {
      throw new ProtocolError('a JSON-encoded broadcast payload is not JSON');
    }
  } else {
    body = { kind: 'binary', bytes: Buffer.from(bytes) };
  }
  return {
    kind: 'broadcast',
    push: { joinRef: joinRef || null, ref: ref || null, topic, event, body, size: bytes.length },
  };
}

/** A message as a text frame in the socket's framing. */
export function encodeMessage(message: Message, vsn: Vsn): string {
  if (vsn === '2.0.0') {
    return JSON.stringify([message.joinRef, message.ref, message.topic, message.event, message.payload]);
  }
  return JSON.stringify({
    topic: message.topic,
    event: message.event,
    payload: message.payload,
    ref: message.ref,
    join_ref: message.joinRef,
  });
}

/**
 * A broadcast to deliver, as a frame for the socket's framing: JSON payloads go as text (either
 * framing), bytes as a kind 4 frame (2.0.0 only; a 1.0.0 socket cannot receive bytes: null).
 */
export function encodeBroadcast(
  topic: string,
  event: string,
  body: BroadcastBody,
  meta: Record<string, unknown> | undefined,
  vsn: Vsn,
): string | Buffer | null {
  if (body.kind === 'json') {
    const payload: Record<string, unknown> = { type: 'broadcast', event, payload: body.value };
    if (meta) payload.meta = meta;
    return encodeMessage({ joinRef: null, ref: null, topic, event: 'broadcast', payload }, vsn);
  }
  if (vsn !== '2.0.0') return null;
  const topicBytes = Buffer.from(topic);
  const eventBytes = Buffer.from(event);
  const metaBytes = Buffer.from(meta ? JSON.stringify(meta) : '');
  if (topicBytes.length > 255 || eventBytes.length > 255 || metaBytes.length > 255) return null;
  const header = Buffer.from([
    KIND_USER_BROADCAST,
    topicBytes.length,
    eventBytes.length,
    metaBytes.length,
    ENCODING_BINARY,
  ]);
  return Buffer.concat([header, topicBytes, eventBytes, metaBytes, body.bytes]);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
