// realtime-js's postgres_changes filter grammar, as its postgresChangesFilter() builder writes it:
// comma as AND outside parentheses and quotes, PostgREST quoting, every operator with and without
// `not.`, SQL's null rules, values compared as the column's type, and refusals with the reason.
import { postgresChangesFilter } from '@supabase/realtime-js';
import { expect, test } from 'vitest';
import {
  FilterError,
  parseFilter,
  parseSelect,
  passes,
  splitTopLevel,
} from '../../src/server/realtime/filters.js';

const columns = new Map([
  ['id', 'int8'],
  ['title', 'text'],
  ['done', 'bool'],
  ['owner', 'uuid'],
  ['due', 'timestamptz'],
  ['score', 'numeric'],
]);
const row = {
  id: 7,
  title: 'Ship it, now',
  done: false,
  owner: '2A3B4C5D-0000-4000-8000-000000000001',
  due: '2026-11-28T10:00:00+00:00',
  score: 2.5,
};
const judge = (filter: string, record: Record<string, unknown> = row) =>
  passes(parseFilter(filter, columns), record, columns);

test('commas split conditions only outside parentheses and double quotes', () => {
  expect(splitTopLevel('a=eq.1,b=in.(1,2),c=eq."x,y"')).toEqual(['a=eq.1', 'b=in.(1,2)', 'c=eq."x,y"']);
  expect(() => splitTopLevel('a=eq."open')).toThrow(FilterError);
});

test('every operator, negated or not, as the builder writes it', () => {
  const built = postgresChangesFilter().eq('title', 'Ship it, now').gt('id', 3).build();
  expect(built).toBe('title=eq."Ship it, now",id=gt.3');
  expect(judge(built)).toBe(true);
  expect(judge(postgresChangesFilter().in('id', [1, 7, 9]).build())).toBe(true);
  expect(judge(postgresChangesFilter().not('id', 'in', [1, 7]).build())).toBe(false);
  expect(judge('id=neq.7')).toBe(false);
  expect(judge('id=lte.7,id=gte.7,id=lt.8')).toBe(true);
  expect(judge('score=gt.2.4')).toBe(true);
  expect(judge('title=like.Ship%')).toBe(true);
  expect(judge('title=like.ship%')).toBe(false);
  expect(judge('title=ilike.ship_it%')).toBe(true);
  expect(judge('title=match.^Ship')).toBe(true);
  expect(judge('title=imatch.^SHIP')).toBe(true);
  expect(judge('done=is.false')).toBe(true);
  expect(judge('done=not.is.false')).toBe(false);
  expect(judge('owner=eq.2a3b4c5d-0000-4000-8000-000000000001')).toBe(true);
  expect(judge('due=gt.2026-11-28T09:00:00Z')).toBe(true);
  expect(judge('id=isdistinct.8')).toBe(true);
  expect(judge('id=not.isdistinct.7')).toBe(true);
});

test('null answers only is and isdistinct; a negated comparison with null does not pass either', () => {
  const nulls = { ...row, title: null };
  expect(judge('title=eq.x', nulls)).toBe(false);
  expect(judge('title=not.eq.x', nulls)).toBe(false);
  expect(judge('title=is.null', nulls)).toBe(true);
  expect(judge('title=isdistinct.null', nulls)).toBe(false);
  expect(judge('title=isdistinct.x', nulls)).toBe(true);
  expect(judge('', row)).toBe(true);
});

test('what cannot be read is refused with the reason', () => {
  const refused = (filter: string) => {
    try {
      parseFilter(filter, columns);
      return null;
    } catch (error) {
      expect(error).toBeInstanceOf(FilterError);
      return (error as Error).message;
    }
  };
  expect(refused('id=between.1')).toBe('unknown operator "between"');
  expect(refused('nope=eq.1')).toBe('column nope does not exist');
  expect(refused('id=eq.seven')).toMatch(/invalid input syntax for type int8/);
  expect(refused('owner=eq.not-a-uuid')).toMatch(/type uuid/);
  expect(refused('id')).toMatch(/not column=operator.value/);
  expect(refused('id=in.1,2')).toMatch(/in needs a list/);
  expect(refused('done=is.maybe')).toMatch(/is takes null, true, false or unknown/);
  expect(refused('title=match.(')).toMatch(/invalid regular expression/);
  expect(refused(`id=in.(${Array.from({ length: 101 }, (_, i) => i).join(',')})`)).toMatch(/at most 100/);
});

test('select lists name existing columns', () => {
  expect(parseSelect(['title', 'done'], columns)).toEqual(['title', 'done']);
  expect(parseSelect('title, done', columns)).toEqual(['title', 'done']);
  expect(parseSelect(undefined, columns)).toBeNull();
  expect(() => parseSelect(['nope'], columns)).toThrow('column nope does not exist');
  expect(() => parseSelect(42, columns)).toThrow(FilterError);
});
