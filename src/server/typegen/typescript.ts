// In charge of turning a catalog into the TypeScript `Database` type that
// `createClient<Database>()` takes, in the format `supabase gen types typescript` writes:
// Tables (Row/Insert/Update/Relationships), Views, Functions (Args/Returns/SetofOptions), Enums,
// CompositeTypes, the helper types and Constants. Pure: the text before formatting.
import type {
  Catalog,
  CatalogArgument,
  CatalogColumn,
  CatalogFunction,
  CatalogRelation,
  CatalogRelationship,
  CatalogType,
} from './catalog.js';
import { helperTypes } from './helpers.js';

const INPUT_MODES = new Set(['in', 'inout', 'variadic']);
/** json, jsonb and text: the types PostgREST passes a whole request body to, unnamed */
const BODY_TYPE_IDS = new Set([114, 3802, 25]);
const STRING_TYPES = new Set([
  'bytea',
  'bpchar',
  'varchar',
  'date',
  'text',
  'citext',
  'time',
  'timetz',
  'timestamp',
  'timestamptz',
  'uuid',
  'vector',
  'interval',
]);

const q = (text: string) => JSON.stringify(text);
const byName = <T extends { name: string }>(a: T, b: T) => a.name.localeCompare(b.name);

function nullable(tsType: string, isNullable: boolean): string {
  // unknown already includes null
  return isNullable && tsType !== 'unknown' && tsType !== 'any' ? `${tsType} | null` : tsType;
}

interface Entry {
  fn: CatalogFunction;
  inArgs: CatalogArgument[];
}

class Renderer {
  private readonly typesById = new Map<number, CatalogType>();
  private readonly relationNames = new Map<number, string>();
  private readonly columnsOf = new Map<number, CatalogColumn[]>();
  private readonly included: Set<string>;

  constructor(private readonly catalog: Catalog) {
    this.included = new Set(catalog.schemas);
    for (const t of catalog.types) this.typesById.set(t.id, t);
    for (const r of catalog.relations) {
      this.relationNames.set(r.id, r.name);
      this.columnsOf.set(r.id, []);
    }
    for (const c of catalog.columns) this.columnsOf.get(c.relationId)?.push(c);
    for (const list of this.columnsOf.values()) list.sort(byName);
  }

  /** A PostgreSQL type name as TypeScript, preferring definitions in the schema being written. */
  tsType(schema: string, pgType: string): string {
    if (pgType === 'bool') return 'boolean';
    if (['int2', 'int4', 'int8', 'float4', 'float8', 'numeric'].includes(pgType)) return 'number';
    if (STRING_TYPES.has(pgType)) return 'string';
    if (pgType === 'json' || pgType === 'jsonb') return 'Json';
    if (pgType === 'void') return 'undefined';
    if (pgType === 'record') return 'Record<string, unknown>';
    if (pgType.startsWith('_')) return `(${this.tsType(schema, pgType.slice(1))})[]`;
    const pick = (candidates: { schema: string }[]) =>
      candidates.find((c) => c.schema === schema) ?? candidates[0];
    const enumType = pick(this.catalog.types.filter((t) => t.name === pgType && t.enums.length > 0));
    if (enumType) {
      const e = enumType as CatalogType;
      return this.included.has(e.schema)
        ? `Database[${q(e.schema)}]['Enums'][${q(e.name)}]`
        : e.enums.map(q).join('|');
    }
    const composite = pick(this.catalog.types.filter((t) => t.name === pgType && t.attributes.length > 0));
    if (composite) {
      return this.included.has(composite.schema)
        ? `Database[${q(composite.schema)}]['CompositeTypes'][${q(pgType)}]`
        : 'unknown';
    }
    for (const [kinds, section] of [
      [['r', 'p'], 'Tables'],
      [['v'], 'Views'],
    ] as const) {
      const relation = pick(
        this.catalog.relations.filter(
          (r) => r.name === pgType && (kinds as readonly string[]).includes(r.kind),
        ),
      );
      if (relation) {
        return this.included.has(relation.schema)
          ? `Database[${q(relation.schema)}][${q(section)}][${q(pgType)}]['Row']`
          : 'unknown';
      }
    }
    return 'unknown';
  }

  column(schema: string, c: { name: string; format: string; nullable: boolean }, optional: boolean): string {
    return `${q(c.name)}${optional ? '?' : ''}: ${nullable(this.tsType(schema, c.format), c.nullable)}`;
  }

  typeName(id: number): string | undefined {
    return this.typesById.get(id)?.name;
  }

  private argType(schema: string, typeId: number): string {
    const name = this.typeName(typeId);
    return name === undefined ? 'unknown' : this.tsType(schema, name);
  }

  /** Functions PostgREST can call: named arguments, or one unnamed body or row argument. */
  callable(fn: CatalogFunction): Entry | null {
    const inArgs = fn.args.filter((a) => INPUT_MODES.has(a.mode));
    const ok =
      inArgs.length === 0 ||
      !inArgs.some((a) => a.name === '') ||
      inArgs.every((a) => a.name !== '' || (a.hasDefault && BODY_TYPE_IDS.has(a.typeId))) ||
      (inArgs.length === 1 && (BODY_TYPE_IDS.has(inArgs[0]!.typeId) || this.isRowType(inArgs[0]!.typeId)));
    return ok ? { fn, inArgs } : null;
  }

  private isRowType(typeId: number): boolean {
    return (this.typesById.get(typeId)?.relationId ?? null) !== null;
  }

  /** The relation (or composite type) whose rows a function returns, by name. */
  private returnRelation(fn: CatalogFunction): string | null {
    if (fn.returnTypeRelationId === null) return null;
    const name = this.relationNames.get(fn.returnTypeRelationId);
    if (name !== undefined) return name;
    const type = this.typesById.get(fn.returnTypeId);
    return type && type.relationId !== null ? type.name : null;
  }

  private returnType(schema: string, fn: CatalogFunction): string {
    const tableColumns = fn.args.filter((a) => a.mode === 'table');
    if (tableColumns.length > 0) {
      return `{
${tableColumns.map((a) => `${q(a.name)}: ${this.argType(schema, a.typeId)}`).join(',\n')} }`;
    }
    const relation = this.catalog.relations.find(
      (r) => r.schema === schema && r.id === fn.returnTypeRelationId,
    );
    if (relation) {
      return `{
${this.columnsOf
  .get(relation.id)!
  .map((c) => this.column(schema, c, false))
  .join(',\n')} }`;
    }
    return this.argType(schema, fn.returnTypeId);
  }

  /**
   * What postgrest-js needs to let `.select()` pick columns of a function's result: the rows'
   * relation, and the relation a single row argument comes from (`*` for a plain call).
   */
  private setofOptions(fn: CatalogFunction): string {
    const to = this.returnRelation(fn);
    if (!to) return '';
    const source = fn.args.length === 1 ? this.typesById.get(fn.args[0]!.typeId) : undefined;
    const from = source && source.relationId !== null ? source.name : '*';
    const oneToOne = !(fn.rows !== null && fn.rows > 1);
    return `SetofOptions: {\nfrom: ${q(from)}\nto: ${q(to)}\nisOneToOne: ${oneToOne}\nisSetofReturn: ${fn.returnsSet} }`;
  }

  private conflict(schema: string, group: Entry[], entry: Entry): string | null {
    if (group.length <= 1) return null;
    const { fn, inArgs } = entry;
    if (inArgs.length === 0) {
      const other = group.find(
        (o) => o !== entry && o.inArgs.length === 1 && o.inArgs[0]!.name === '' && o.inArgs[0]!.hasDefault,
      );
      if (other) {
        const returned = this.typeName(other.fn.returnTypeId) ?? 'unknown';
        return `Could not choose the best candidate function between: ${schema}.${fn.name}(), ${schema}.${fn.name}( => ${returned}). Try renaming the parameters or the function itself in the database so function overloading can be resolved`;
      }
    }
    if (inArgs.length === 1 && inArgs[0]!.name !== '') {
      const [arg] = inArgs as [CatalogArgument];
      const others = group.filter(
        (o) =>
          o !== entry &&
          o.inArgs.length === 1 &&
          o.inArgs[0]!.name === arg.name &&
          o.inArgs[0]!.typeId !== arg.typeId,
      );
      if (others.length > 0) {
        const list = [entry, ...others]
          .sort((a, b) => a.inArgs[0]!.typeId - b.inArgs[0]!.typeId)
          .map(
            (o) =>
              `${schema}.${fn.name}(${o.inArgs.map((a) => `${a.name} => ${this.typeName(a.typeId) ?? 'unknown'}`).join(', ')})`,
          )
          .join(', ');
        return `Could not choose the best candidate function between: ${list}. Try renaming the parameters or the function itself in the database so function overloading can be resolved`;
      }
    }
    return null;
  }

  signatures(schema: string, group: Entry[]): string {
    return group
      .map((entry) => {
        const { fn, inArgs } = entry;
        const args =
          inArgs.length === 0
            ? 'never'
            : `{ ${inArgs.map((a) => `${q(a.name)}${a.hasDefault ? '?' : ''}: ${this.argType(schema, a.typeId)}`).join(', ')} }`;
        const conflict = this.conflict(schema, group, entry);
        const rowWithoutMatch =
          inArgs.length === 1 &&
          inArgs[0]!.name === '' &&
          this.isRowType(inArgs[0]!.typeId) &&
          !this.returnRelation(fn);
        let returns: string;
        if (conflict) returns = `{ error: true } & ${q(conflict)}`;
        else if (rowWithoutMatch) {
          returns = `{ error: true } & ${q(`the function ${schema}.${fn.name} with parameter or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache`)}`;
        } else returns = this.returnType(schema, fn);
        // A set estimated at one row collapses to one object only where SetofOptions tells
        // postgrest-js so; otherwise the response is an array, and so is the type.
        const single = !(fn.rows !== null && fn.rows > 1) && this.returnRelation(fn) !== null;
        return `{ Args: ${args}; Returns: ${returns}${fn.returnsSet && !single ? '[]' : ''}\n${this.setofOptions(fn)} }`;
      })
      .join(' |\n');
  }

  computedFields(schema: string, entries: Entry[], relation: string): string[] {
    return entries
      .filter(({ fn }) => fn.argumentTypes === relation)
      .map(({ fn }) => `${q(fn.name)}: ${nullable(this.returnType(schema, fn), true)}`);
  }

  relationships(relation: CatalogRelation, all: CatalogRelationship[]): string {
    return all
      .filter((r) => r.schema === relation.schema && r.relation === relation.name)
      .filter((r) => r.referencedSchema === relation.schema)
      .map(
        (r) => `{
          foreignKeyName: ${q(r.foreignKeyName)}
          columns: ${JSON.stringify(r.columns)}
          isOneToOne: ${r.isOneToOne}
          referencedRelation: ${q(r.referencedRelation)}
          referencedColumns: ${JSON.stringify(r.referencedColumns)}
        }`,
      )
      .join(',\n');
  }

  schema(schema: string): string {
    const relations = this.catalog.relations.filter((r) => r.schema === schema);
    const tables = relations.filter((r) => ['r', 'p', 'f'].includes(r.kind)).sort(byName);
    const views = relations.filter((r) => r.kind === 'v' || r.kind === 'm').sort(byName);
    const entries = this.catalog.functions
      .filter((f) => f.schema === schema)
      .map((f) => ({ ...f, args: [...f.args].sort(byName) }))
      .map((f) => this.callable(f))
      .filter((e): e is Entry => e !== null)
      .sort((a, b) => a.fn.name.localeCompare(b.fn.name));
    const enums = this.catalog.types.filter((t) => t.schema === schema && t.enums.length > 0).sort(byName);
    const composites = this.catalog.types
      .filter((t) => t.schema === schema && t.attributes.length > 0)
      .sort(byName);
    const relationships = [...this.catalog.relationships].sort(
      (a, b) =>
        a.foreignKeyName.localeCompare(b.foreignKeyName) ||
        a.referencedRelation.localeCompare(b.referencedRelation) ||
        JSON.stringify(a.referencedColumns).localeCompare(JSON.stringify(b.referencedColumns)),
    );
    const none = '[_ in never]: never';
    const cols = (r: CatalogRelation) => this.columnsOf.get(r.id)!;

    const tableText = tables.map((t) => {
      const write = (optional: (c: CatalogColumn) => boolean) =>
        cols(t)
          .map((c) => (c.identity === 'a' ? `${q(c.name)}?: never` : this.column(schema, c, optional(c))))
          .join(',\n');
      return `${q(t.name)}: {
        Row: {
${[...cols(t).map((c) => this.column(schema, c, false)), ...this.computedFields(schema, entries, t.name)].join(',\n')} }
        Insert: {
${write((c) => c.nullable || c.identity !== '' || c.defaultValue !== null)} }
        Update: {
${write(() => true)} }
        Relationships: [
${this.relationships(t, relationships)} ]
      }`;
    });
    const viewText = views.map((v) => {
      const write = () =>
        cols(v)
          .map((c) =>
            c.updatable ? this.column(schema, { ...c, nullable: true }, true) : `${q(c.name)}?: never`,
          )
          .join(',\n');
      return `${q(v.name)}: {
        Row: {
${[...cols(v).map((c) => this.column(schema, c, false)), ...this.computedFields(schema, entries, v.name)].join(',\n')} }
        ${v.updatable ? `Insert: {\n${write()} }\nUpdate: {\n${write()} }\n` : ''}Relationships: [\n${this.relationships(v, relationships)} ]
      }`;
    });
    const groups = new Map<string, Entry[]>();
    for (const e of entries) groups.set(e.fn.name, [...(groups.get(e.fn.name) ?? []), e]);
    const functionText = [...groups].map(([name, group]) => {
      group.sort(
        (a, b) =>
          a.fn.argumentTypes.localeCompare(b.fn.argumentTypes) ||
          a.fn.returnType.localeCompare(b.fn.returnType),
      );
      return `${q(name)}:\n${this.signatures(schema, group)}`;
    });
    const enumText = enums.map((e) => `${q(e.name)}: ${e.enums.map(q).join('|')}`);
    const compositeText = composites.map(
      (t) =>
        `${q(t.name)}: {
${t.attributes
  .map(
    (a) =>
      `${q(a.name)}: ${this.typeName(a.typeId) === undefined ? 'unknown' : nullable(this.argType(schema, a.typeId), true)}`,
  )
  .join(',\n')} }`,
    );
    const section = (items: string[]) => (items.length === 0 ? none : items.join(',\n'));
    return `${q(schema)}: {
      Tables: {
${section(tableText)} }
      Views: {
${section(viewText)} }
      Functions: {
${section(functionText)} }
      Enums: {
${section(enumText)} }
      CompositeTypes: {
${section(compositeText)} }
    }`;
  }

  constants(schema: string): string {
    const enums = this.catalog.types.filter((t) => t.schema === schema && t.enums.length > 0).sort(byName);
    return `${q(schema)}: {
Enums: {
${enums.map((e) => `${q(e.name)}: [${e.enums.map(q).join(', ')}]`).join(',\n')} } }`;
  }
}

/**
 * The parts of the types file for the catalog's schemas: `head` (Json and Database) and `tail`
 * (Constants) before formatting, and the helper types between them, already laid out.
 */
export function renderTypes(
  catalog: Catalog,
  defaultSchema = 'public',
  /** the PostgREST version whose features postgrest-js may assume (`__InternalSupabase`) */
  postgrestVersion?: string,
): { head: string; helpers: string; tail: string } {
  const renderer = new Renderer(catalog);
  const schemas = [...catalog.schemas].sort((a, b) => a.localeCompare(b));
  const internal =
    postgrestVersion === undefined
      ? ''
      : `// Allows to automatically instantiate createClient with right options
  // instead of createClient<Database, { PostgrestVersion: 'XX' }>(URL, KEY)
  __InternalSupabase: {
    PostgrestVersion: ${q(postgrestVersion)}
  }`;
  return {
    head: `
export type Json = string | number | boolean | null | { [key: string]: Json | undefined } | Json[]

export type Database = {
  ${internal}
  ${schemas.map((s) => renderer.schema(s)).join('\n')}
}`,
    helpers: helperTypes(defaultSchema),
    tail: `export const Constants = {
  ${schemas.map((s) => renderer.constants(s)).join(',\n')}
} as const`,
  };
}
