// Many accounts from one address cannot hold the data API's connections between them: each
// account is within its own share, yet together they run at most DATA_API_ADDRESS_CONCURRENCY
// statements, and a neighbour from another address reads at once beside them. Addresses are
// given by X-Forwarded-For under TRUST_PROXY, as behind the operator's proxy.
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createTestDatabase, startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';

const CROWD_ADDRESS = '203.0.113.5';
const NEIGHBOUR_ADDRESS = '198.51.100.9';
const ACCOUNTS = 16;
const ADDRESS_SHARE = 8;
const SLEEP_SECONDS = 1;

let server: TestServer;
let crowd: SignedIn[];
let neighbour: SignedIn;
let neighbourWs: string;

beforeAll(async () => {
  // A function that takes as long as it is told to, callable by signed-in users.
  const databaseUrl = await createTestDatabase();
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`
    create function public.take_time(seconds float8) returns boolean language sql as
      $$ select true from pg_sleep(seconds) $$;
    grant execute on function public.take_time(float8) to authenticated`);
  await admin.end();
  // The production pool (20, of which the data API holds 15) and address share.
  server = await startTestServer({
    DATABASE_URL: databaseUrl,
    DB_POOL_MAX: '20',
    TRUST_PROXY: 'true',
    DATA_API_ADDRESS_CONCURRENCY: String(ADDRESS_SHARE),
    RATE_LIMIT_SIGNUP_PER_ADDRESS: '1000',
  });
  crowd = [];
  for (let i = 0; i < ACCOUNTS; i++) crowd.push(await signUp(server, `crowd${i}`));
  neighbour = await signUp(server, 'neighbour');
  neighbourWs = await workspace(server, neighbour, 'Neighbour');
}, 120_000);
afterAll(async () => server?.close());

function rest(path: string, token: string, address: string, init: RequestInit = {}) {
  return fetch(`${server.url}/rest/v1${path}`, {
    ...init,
    headers: {
      apikey: server.config.projectApiKey,
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'x-forwarded-for': address,
    },
  });
}

async function sleepingStatements(): Promise<number> {
  const r = await server.pool.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity
     where datname = current_database() and state = 'active' and query like '%take_time%'
       and pid <> pg_backend_pid()`,
  );
  return r.rows[0]!.n;
}

test('accounts sharing one address hold at most its share of connections; another address reads at once', async () => {
  // Every account of the crowd asks two slow statements at once: more than the data API's
  // connections in all, while each account stays within its own share.
  const crowdRequests = crowd.flatMap((user) =>
    [0, 1].map(async () => {
      const res = await rest('/rpc/take_time', user.accessToken, CROWD_ADDRESS, {
        method: 'POST',
        body: JSON.stringify({ seconds: SLEEP_SECONDS }),
      });
      await res.arrayBuffer();
      return res.status;
    }),
  );
  // Watch how many of the crowd's statements run at once while it lasts.
  let peak = 0;
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      peak = Math.max(peak, await sleepingStatements());
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  await new Promise((resolve) => setTimeout(resolve, 300));

  const latencies: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    const res = await rest(
      `/projects?select=id&workspace_id=eq.${neighbourWs}`,
      neighbour.accessToken,
      NEIGHBOUR_ADDRESS,
    );
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    latencies.push(performance.now() - started);
  }
  const statuses = await Promise.all(crowdRequests);
  watching = false;
  await watcher;
  console.log(
    `address share: crowd peak ${peak} statements at once; neighbour reads ${latencies.map((l) => l.toFixed(0)).join(', ')} ms`,
  );

  // The crowd was held to the address's share, and every one of its requests was served in turn.
  expect(peak).toBeGreaterThan(0);
  expect(peak).toBeLessThanOrEqual(ADDRESS_SHARE);
  expect(statuses.every((status) => status === 200)).toBe(true);
  // The neighbour never waited for one of the crowd's statements to finish.
  expect(Math.max(...latencies)).toBeLessThan((SLEEP_SECONDS * 1000) / 2);
});
