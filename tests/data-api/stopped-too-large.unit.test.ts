// SQLSTATE TN413 is how data_api.response_too_large stops a statement whose embeds passed the
// body limit; the data API answers it as a body that is too large. Anything else raising TN413
// (a malformed detail) is mapped like any other SQLSTATE, never a crash.
import { describe, expect, test } from 'vitest';
import { toHttpError } from '../../src/server/data-api/errors.js';

const pgError = (detail: string | undefined) =>
  Object.assign(new Error('response body over the limit'), { code: 'TN413', severity: 'ERROR', detail });

describe('TN413', () => {
  test('with both figures: 400 TNTRY413, "more than" the total so far', () => {
    const error = toHttpError(pgError('{"bytes": 120000, "max": 100000}'), 'authenticated');
    expect(error).toMatchObject({ status: 400, code: 'TNTRY413' });
    expect(error?.message).toBe('The response would be more than 120000 bytes; the limit is 100000');
  });

  test('without them: the SQLSTATE as it is, a 400 with its own message', () => {
    for (const detail of [undefined, 'not json', '{"bytes": "many"}']) {
      const error = toHttpError(pgError(detail), 'authenticated');
      expect(error).toMatchObject({ status: 400, code: 'TN413', message: 'response body over the limit' });
    }
  });
});
