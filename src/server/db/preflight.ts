// In charge of telling, before any migration runs, whether the connected role can install and run
// the service on this database, and when it cannot, the exact SQL an administrator runs once.
// Managed PostgreSQL (Supabase, RDS/Aurora, Cloud SQL, Neon, Azure) gives no superuser: an owner
// role with CREATEROLE, sometimes BYPASSRLS. docs/operations.md has the set-up per provider.
import type { Pool } from './pool.js';

/** The request roles the data API switches to, shared by every database of the cluster. */
const REQUEST_ROLES = ['anon', 'authenticated', 'service_role'] as const;

export class DatabaseSetupError extends Error {
  override name = 'DatabaseSetupError';
}

export interface RoleFacts {
  name: string;
  exists: boolean;
  bypassrls: boolean;
  /** the connected role may SET ROLE to it */
  member: boolean;
  /** the connected role may grant it (ADMIN OPTION) */
  admin: boolean;
}

export interface Facts {
  user: string;
  database: string;
  version: number;
  superuser: boolean;
  createrole: boolean;
  bypassrls: boolean;
  createOnDatabase: boolean;
  /** this database has been set up by the service before */
  installed: boolean;
  /** an auth.users table the service did not make (Supabase's GoTrue keeps its users there) */
  foreignAuth: boolean;
  roles: RoleFacts[];
}

async function readFacts(pool: Pool): Promise<Facts> {
  const me = await pool.query<Omit<Facts, 'roles'>>(
    `select current_user as user, current_database() as database,
            current_setting('server_version_num')::int / 10000 as version,
            r.rolsuper as superuser, r.rolcreaterole as createrole, r.rolbypassrls as bypassrls,
            has_database_privilege(current_database(), 'CREATE') as "createOnDatabase",
            to_regclass('internal.schema_migrations') is not null as installed,
            to_regclass('auth.users') is not null
              and to_regclass('internal.schema_migrations') is null as "foreignAuth"
     from pg_roles r where r.rolname = current_user`,
  );
  const roles = await pool.query<RoleFacts>(
    `select n.name, r.oid is not null as exists, coalesce(r.rolbypassrls, false) as bypassrls,
            r.oid is not null and pg_has_role(current_user, r.oid, 'MEMBER') as member,
            r.oid is not null and pg_has_role(current_user, r.oid, 'USAGE WITH ADMIN OPTION') as admin
     from unnest($1::text[]) n(name) left join pg_roles r on r.rolname = n.name`,
    [REQUEST_ROLES],
  );
  return { ...me.rows[0]!, roles: roles.rows };
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * What stands between the connected role and a working install, each with the statement that
 * settles it; empty when nothing does. Pure over the facts, so every combination is testable.
 */
export function setupProblems(facts: Facts): { why: string; sql: string }[] {
  if (facts.foreignAuth) {
    return [
      {
        why:
          'this database already has an auth schema with users that Tenantry did not create (a Supabase ' +
          "project's GoTrue keeps its users there). Tenantry is its own identity service and keeps its users " +
          'in auth too, so it will not share the schema: give it a database of its own on the same server',
        sql: 'create database tenantry;  -- then point DATABASE_URL at it',
      },
    ];
  }
  if (facts.superuser) return [];
  const problems: { why: string; sql: string }[] = [];
  const user = quote(facts.user);
  if (!facts.installed && !facts.createOnDatabase) {
    problems.push({
      why: `${facts.user} must create the service's schemas (auth, internal) in this database`,
      sql: `grant create on database ${quote(facts.database)} to ${user};`,
    });
  }
  if (!facts.bypassrls) {
    problems.push({
      why: `${facts.user} runs the service's own work (sign-in, webhooks, digests) across every tenant's rows`,
      sql: `alter role ${user} bypassrls;`,
    });
  }
  for (const role of facts.roles) {
    if (!role.exists) {
      // The migration creates it; the creator of a role may grant it (and on 15 CREATEROLE may).
      if (!facts.createrole) {
        problems.push({
          why: `the request role ${role.name} does not exist and ${facts.user} may not create roles`,
          sql: `create role ${role.name} nologin noinherit${role.name === 'service_role' ? ' bypassrls' : ''}; grant ${role.name} to ${user} with admin option;`,
        });
      } else if (role.name === 'service_role' && facts.version < 16) {
        // On 15 only a superuser gives BYPASSRLS, so the role must be made with it.
        problems.push({
          why: 'service_role must bypass row-level security, which on PostgreSQL 15 only a superuser can give',
          sql: `create role service_role nologin noinherit bypassrls; grant service_role to ${user} with admin option;`,
        });
      } else if (role.name === 'service_role' && !facts.bypassrls) {
        problems.push({
          why: 'service_role must bypass row-level security, which only a role that bypasses it can give',
          sql: 'alter role service_role bypassrls;  -- after the first start has created it',
        });
      }
      continue;
    }
    const canGrant = role.admin || (facts.createrole && facts.version < 16);
    if (!role.member && !canGrant) {
      problems.push({
        why: `${facts.user} must be able to act as the request role ${role.name}`,
        sql: `grant ${role.name} to ${user} with admin option;`,
      });
    }
    if (role.name === 'service_role' && !role.bypassrls) {
      const canAlter = facts.version >= 16 && facts.bypassrls && (role.admin || canGrant);
      if (!canAlter) {
        problems.push({
          why: 'service_role must bypass row-level security (the service-role key is the operator’s own back end)',
          sql: 'alter role service_role bypassrls;',
        });
      }
    }
  }
  return problems;
}

/** Refuses, naming every statement an administrator runs once, when the role cannot install. */
export async function checkDatabaseSetup(pool: Pool): Promise<void> {
  const facts = await readFacts(pool);
  const problems = setupProblems(facts);
  if (problems.length === 0) return;
  const lines = problems.map((p) => `  - ${p.why}:\n      ${p.sql}`);
  throw new DatabaseSetupError(
    `the database role ${facts.user} cannot install Tenantry on ${facts.database} as it is. ` +
      `Run once, as an administrator of the database server:\n${lines.join('\n')}\n` +
      'then start again. docs/operations.md ("Managed PostgreSQL") has the set-up for each provider.',
  );
}
