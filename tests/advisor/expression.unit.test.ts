// Unit tests of how the advisor reads policy expressions as PostgreSQL prints them (which calls run
// once per statement, literals and quoted names that only look like calls) and how it reads the
// relations a generated types file describes.
import { describe, expect, test } from 'vitest';
import {
  calls,
  evaluatedOnce,
  parseExpression,
  splitAt,
  unwrap,
} from '../../src/server/advisor/expression.js';
import { relationsInTypes } from '../../src/server/advisor/types-file.js';

/** The calls named `name` in the expression, each with whether it is evaluated once per statement. */
function onceFlags(source: string, name: string, table = 'notes'): boolean[] {
  const expression = parseExpression(source);
  return calls(expression)
    .filter((call) => `${call.schema}.${call.name}` === name || call.name === name)
    .map((call) => evaluatedOnce(expression, call, table));
}

describe('calls evaluated once per statement', () => {
  test('a call in its own sub-select is once; a bare call beside it is per row', () => {
    // Splinter's test ("the text contains `select auth.uid()`") passes this policy.
    expect(
      onceFlags('((( SELECT auth.uid() AS uid) = user_id) OR (auth.uid() = editor_id))', 'auth.uid'),
    ).toEqual([true, false]);
  });

  test('a sub-select that mentions the row runs again for every row', () => {
    expect(onceFlags('( SELECT (auth.uid() = notes.user_id))', 'auth.uid')).toEqual([false]);
    expect(
      onceFlags(
        '(EXISTS ( SELECT 1 FROM public.workspace_members m WHERE ((m.user_id = auth.uid()) AND (m.workspace_id = notes.workspace_id))))',
        'auth.uid',
      ),
    ).toEqual([false]);
    // …unless the call sits in an inner sub-select of its own.
    expect(
      onceFlags(
        '(EXISTS ( SELECT 1 FROM public.workspace_members m WHERE ((m.user_id = ( SELECT auth.uid() AS uid)) AND (m.workspace_id = notes.workspace_id))))',
        'auth.uid',
      ),
    ).toEqual([true]);
  });

  test('an uncorrelated IN (sub-select) is evaluated once, with its calls', () => {
    expect(
      onceFlags(
        '(workspace_id IN ( SELECT m.workspace_id FROM public.workspace_members m WHERE (m.user_id = auth.uid())))',
        'auth.uid',
      ),
    ).toEqual([true]);
  });

  test('string literals and quoted names that look like calls are not calls', () => {
    const expression = parseExpression(
      `(('auth.uid()'::text = (user_id)::text) AND ("auth.uid()" IS NOT NULL) AND (E'it''s \\' auth.uid()' <> ''::text))`,
    );
    expect(calls(expression).map((call) => call.name)).toEqual([]);
  });

  test('quoted and unquoted names are read as PostgreSQL reads them', () => {
    const expression = parseExpression('("My Schema"."Check"(x) AND Tenantry.Is_Member(workspace_id))');
    expect(calls(expression).map((call) => `${call.schema}.${call.name}`)).toEqual([
      'My Schema.Check',
      'tenantry.is_member',
    ]);
  });
});

describe('OR and AND parts', () => {
  test('split where they stand outside every parenthesis, after unwrapping', () => {
    const expression = parseExpression('((a = 1) OR ((b = 2) AND (c = ANY (ARRAY[1, 2]))))');
    const [from, to] = unwrap(expression, 0, expression.tokens.length);
    const ors = splitAt(expression, from, to, 'or');
    expect(ors).toHaveLength(2);
    const [, second] = ors as [[number, number], [number, number]];
    const [a, b] = unwrap(expression, ...second);
    expect(splitAt(expression, a, b, 'and')).toHaveLength(2);
  });
});

describe('relations in a generated types file', () => {
  test('reads the keys under Tables and Views per schema, and nothing else', () => {
    const source = `export type Json = string | { [key: string]: Json | undefined }

export type Database = {
  // a comment { with braces }
  public: {
    Tables: {
      projects: {
        Row: { id: string; name: string }
        Relationships: [{ foreignKeyName: "x"; columns: ["workspace_id"] }]
      }
      "odd name": { Row: { id: string } }
    }
    Views: {
      project_names: { Row: { name: string | null } }
    }
    Functions: {
      create_workspace: { Args: { name: string }; Returns: Json }
    }
    Enums: { workspace_role: "owner" | "admin" }
  }
  personal: {
    Tables: { [_ in never]: never }
    Views: { [_ in never]: never }
  }
}

export type Tables<T> = { notATable: T }
`;
    const relations = relationsInTypes(source);
    expect(relations).not.toBeNull();
    expect([...relations!.entries()].map(([schema, names]) => [schema, [...names].sort()])).toEqual([
      ['public', ['odd name', 'project_names', 'projects']],
    ]);
  });

  test('a file without a Database type reads as none', () => {
    expect(relationsInTypes('export type Other = {}\n')).toBeNull();
  });
});
