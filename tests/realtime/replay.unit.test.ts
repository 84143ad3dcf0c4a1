// A join's broadcast.replay request: none, Supabase's refusals (public channel, bad params), and
// the limit brought within 1..25 with 10 when none is named.
import { describe, expect, test } from 'vitest';
import { replayRequest } from '../../src/server/realtime/replay.js';

describe('replayRequest', () => {
  test('no replay asked', () => {
    expect(replayRequest({}, true)).toEqual({ replay: null });
    expect(replayRequest({ replay: null }, false)).toEqual({ replay: null });
  });

  test('a public channel is refused whatever it asks', () => {
    expect(replayRequest({ replay: { since: 1, limit: 5 } }, false)).toEqual({
      refusal: 'UnableToReplayMessages: Replay is not allowed for public channels',
    });
  });

  test('since must be a whole ms epoch; limit, when named, a whole number', () => {
    const invalid = { refusal: 'UnableToReplayMessages: Replay params are not valid' };
    for (const replay of [
      true,
      {},
      { since: '1' },
      { since: 1.5 },
      { since: -1 },
      { since: 1, limit: '3' },
      { since: 1, limit: 2.5 },
    ])
      expect(replayRequest({ replay }, true)).toEqual(invalid);
  });

  test('the limit defaults to 10 and is brought within 1..25', () => {
    expect(replayRequest({ replay: { since: 5 } }, true)).toEqual({ replay: { since: 5, limit: 10 } });
    expect(replayRequest({ replay: { since: 5, limit: 0 } }, true)).toEqual({
      replay: { since: 5, limit: 1 },
    });
    expect(replayRequest({ replay: { since: 5, limit: 100 } }, true)).toEqual({
      replay: { since: 5, limit: 25 },
    });
    expect(replayRequest({ replay: { since: 5, limit: 7 } }, true)).toEqual({
      replay: { since: 5, limit: 7 },
    });
  });
});
