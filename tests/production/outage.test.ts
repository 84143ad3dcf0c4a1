// A database outage under steady load: PostgreSQL is stopped and started again while requests
// keep coming. During the outage every request fails fast with 503 and a clear body (no crash, no
// hung request); after it the same server serves again with no failures, and no acknowledged
// write is lost.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/server/db/embedded.js';
import { migrate } from '../../src/server/db/migrate.js';
import { createPool } from '../../src/server/db/pool.js';
import { startTestServer, type TestServer } from '../support/server.js';

let root: string;
let database: EmbeddedDatabase;
let server: TestServer;

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'tenantry-outage-'));
  chmodSync(root, 0o755);
  // persistent: a non-persistent cluster deletes its files on stop, and this one must start again.
  database = await startEmbeddedPostgres({ dataDir: path.join(root, 'pg'), port: 0, persistent: true });
  const pool = createPool(database.url);
  await migrate(pool);
  await pool.end();
  server = await startTestServer({ DATABASE_URL: database.url });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await database?.stop().catch(() => undefined);
  rmSync(root, { recursive: true, force: true });
});

interface Sample {
  phase: 'before' | 'outage' | 'after';
  status: number;
  ms: number;
  body: string;
}

test(
  'requests fail fast with 503 during an outage and succeed again after it',
  { timeout: 120_000 },
  async () => {
    const supabase = server.client();
    const { data } = await supabase.auth.signUp({
      email: 'steady@example.com',
      password: 'correct horse battery',
    });
    const token = data.session!.access_token;
    const ws = await supabase.rpc('create_workspace', { name: 'Steady' });
    const workspaceId = (ws.data as { id: string }).id;
    const headers = {
      apikey: server.config.projectApiKey,
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      prefer: 'return=representation',
    };

    let phase: Sample['phase'] = 'before';
    const samples: Sample[] = [];
    const acknowledged: string[] = [];
    let running = true;
    let n = 0;
    const load = (async () => {
      while (running) {
        const name = `write ${n++}`;
        const started = performance.now();
        const res = await fetch(`${server.url}/rest/v1/projects`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ workspace_id: workspaceId, name }),
          signal: AbortSignal.timeout(10_000),
        }).catch(() => null);
        const body = res ? await res.text() : '';
        samples.push({ phase, status: res?.status ?? 0, ms: performance.now() - started, body });
        if (res?.status === 201) acknowledged.push(name);
        await new Promise((r) => setTimeout(r, 25));
      }
    })();

    await new Promise((r) => setTimeout(r, 1500));
    phase = 'outage';
    await database.stop();
    await new Promise((r) => setTimeout(r, 3000));
    await database.restart();
    phase = 'after';
    // Let connections come back, then measure a clean window.
    await new Promise((r) => setTimeout(r, 1500));
    const recoveredFrom = samples.length;
    await new Promise((r) => setTimeout(r, 2500));
    running = false;
    await load;

    const before = samples.filter((s) => s.phase === 'before');
    const outage = samples.filter((s) => s.phase === 'outage');
    const after = samples.slice(recoveredFrom);
    const failedDuringOutage = outage.filter((s) => s.status !== 201);
    console.log(
      `outage drill: ${before.length} requests before (${before.filter((s) => s.status !== 201).length} failed), ` +
        `${outage.length} during (${failedDuringOutage.length} failed, slowest ${Math.round(Math.max(...outage.map((s) => s.ms)))} ms), ` +
        `${after.length} after recovery (${after.filter((s) => s.status !== 201).length} failed)`,
    );
    expect(before.every((s) => s.status === 201)).toBe(true);
    expect(failedDuringOutage.length).toBeGreaterThan(0);
    for (const failure of failedDuringOutage) {
      expect(failure.status).toBe(503);
      expect(failure.ms).toBeLessThan(5000);
      expect(JSON.parse(failure.body)).toMatchObject({
        code: 'PGRST000',
        message: expect.stringContaining('unavailable'),
      });
    }
    expect(after.length).toBeGreaterThan(10);
    expect(after.every((s) => s.status === 201)).toBe(true);

    // Nothing acknowledged was lost.
    const pool = createPool(database.url);
    const stored = await pool.query<{ name: string }>(
      'select name from public.projects where workspace_id = $1',
      [workspaceId],
    );
    await pool.end();
    const names = new Set(stored.rows.map((r) => r.name));
    expect(acknowledged.filter((name) => !names.has(name))).toEqual([]);
  },
);
