// The hostile tenant of the hostile-neighbour test and benchmark: its workspace's data and the
// data-API requests it keeps in flight, so the test and `npm run bench -- hostile` attack alike.
import type { Queryable } from '../../src/server/db/pool.js';

/**
 * The attacker's 300 projects, with long texts that almost match its patterns (the worst case
 * for LIKE), and the neighbour's 50 ordinary ones.
 */
export async function seedHostileWorkspaces(
  db: Queryable,
  attackerWorkspace: string,
  neighbourWorkspace: string,
): Promise<void> {
  await db.query(
    `insert into public.projects (workspace_id, name, description)
     select $1, 'p' || i, repeat('a', 2000) from generate_series(1, 300) i`,
    [attackerWorkspace],
  );
  await db.query(
    `insert into public.projects (workspace_id, name, description)
     select $1, 'n' || i, 'ordinary' from generate_series(1, 50) i`,
    [neighbourWorkspace],
  );
}

/**
 * Data-API paths (under /rest/v1): rows multiplied by a self-embed, adversarial like patterns at
 * the limit and over it, a control character in a name, an oversized or-tree.
 */
export function hostilePaths(attackerWorkspace: string): string[] {
  const almostMatching = `*${'a'.repeat(254)}b*`;
  return [
    `/projects?select=d:description,w:workspaces(p:projects(d:description))&workspace_id=eq.${attackerWorkspace}`,
    `/projects?select=id&or=(${Array.from({ length: 64 }, () => `description.like.${almostMatching}`).join(',')})`,
    `/projects?select=id&or=(${Array.from({ length: 3 }, () => `description.like.*${'a'.repeat(2400)}*`).join(',')})`,
    `/projects?select=%22a%00b%22:name`,
    `/projects?select=id&or=(${Array.from({ length: 500 }, (_, i) => `name.eq.${i}`).join(',')})`,
  ];
}
