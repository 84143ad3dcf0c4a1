// Presence from other instances: an instance that falls silent (it crashed, or its database
// connection did) is forgotten with its presence after INSTANCE_SILENCE_MS; one still heard from
// is kept; and a repeated announcement (after a new instance's hello) changes nothing.
import { expect, test } from 'vitest';
import { INSTANCE_SILENCE_MS, Presence } from '../../src/server/realtime/presence.js';
import { Topics } from '../../src/server/realtime/topics.js';

test("a silent instance's presence is forgotten; a live one's is kept", () => {
  const presence = new Presence(new Topics());
  const key = 'public:realtime:lounge';
  const started = Date.now();
  presence.fromRelay(
    { t: 'p', op: 'track', key, id: 'a1', pkey: 'ada', meta: { phx_ref: 'r1', at: 'x' } },
    'x',
  );
  presence.fromRelay(
    { t: 'p', op: 'track', key, id: 'g1', pkey: 'grace', meta: { phx_ref: 'r2', at: 'y' } },
    'y',
  );
  presence.fromRelay(
    { t: 'p', op: 'track', key, id: 'a1', pkey: 'ada', meta: { phx_ref: 'r1', at: 'x' } },
    'x',
  );
  expect(presence.state(key)).toEqual({
    ada: { metas: [{ phx_ref: 'r1', at: 'x' }] },
    grace: { metas: [{ phx_ref: 'r2', at: 'y' }] },
  });
  presence.expire(started + INSTANCE_SILENCE_MS - 1000);
  expect(Object.keys(presence.state(key)).sort()).toEqual(['ada', 'grace']);
  // Only y says it is alive; x falls silent.
  const later = Date.now;
  Date.now = () => started + INSTANCE_SILENCE_MS;
  presence.fromRelay({ t: 'p', op: 'alive' }, 'y');
  Date.now = later;
  presence.expire(started + INSTANCE_SILENCE_MS + 1000);
  expect(presence.state(key)).toEqual({ grace: { metas: [{ phx_ref: 'r2', at: 'y' }] } });
});
