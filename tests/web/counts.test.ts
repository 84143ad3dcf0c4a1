// Counts in words read right for every number the product tells: one, none, many, large (with
// separators) and fractions, and nouns whose plural is not the noun plus s.
import { describe, expect, test } from 'vitest';
import { count, nounFor } from '../../src/server/text/counts.js';

describe('count', () => {
  test.each([
    [0, 'project', '0 projects'],
    [1, 'project', '1 project'],
    [2, 'project', '2 projects'],
    [1204, 'member', '1,204 members'],
    [1.5, 'hour', '1.5 hours'],
  ])('%d %s', (n, noun, expected) => {
    expect(count(n, noun)).toBe(expected);
  });

  test('an irregular plural', () => {
    expect(count(1, 'member left', 'members left')).toBe('1 member left');
    expect(count(3, 'member left', 'members left')).toBe('3 members left');
    expect(nounFor(1, 'person', 'people')).toBe('person');
    expect(nounFor(7, 'person', 'people')).toBe('people');
  });
});
