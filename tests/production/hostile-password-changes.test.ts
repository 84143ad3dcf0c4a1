// One account keeps 48 password changes (PUT /user {password}) in flight without pause while other
// users sign in: every password hash of the process takes its turn in one fair queue, so the
// others' sign-ins stay under a second at p99 on this 2-core machine (before, the account's
// backlog took their median from 36 ms to 1.35 s), none of them fails, and nothing is left
// behind: no hash queued, no statement running, memory back where it was. The per-user limit on
// password changes is lifted here: the queue alone must protect the neighbours. The sign-ins are
// first timed alone, for the printed comparison; what is left between the two under attack is
// the cost of answering the account's flood of refusals (client and server share this process).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { signUp, type SignedIn } from '../support/workspaces.js';

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

const QUIET_SECONDS = 4;
const ATTACK_SECONDS = 15;
const ATTACK_CONCURRENCY = 48;
const PASSWORD = 'correct horse battery';

let server: TestServer;
let attacker: SignedIn;
let neighbours: SignedIn[];

beforeAll(async () => {
  server = await startTestServer({
    DB_POOL_MAX: '20',
    RATE_LIMIT_PASSWORD_CHANGES: '1000000',
    RATE_LIMIT_SIGNIN_PER_EMAIL: '100000',
    RATE_LIMIT_SIGNIN_PER_ADDRESS: '100000',
  });
  attacker = await signUp(server, 'hasher');
  neighbours = [];
  for (let i = 0; i < 6; i++) neighbours.push(await signUp(server, `signer${i}`));
}, 120_000);
afterAll(async () => server?.close());

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
}

test(
  "one account's password changes cannot slow other users' sign-ins",
  async () => {
    gc();
    const baseline = process.memoryUsage().heapUsed;
    const attackStatuses = new Map<number, number>();
    let attempt = 0;
    const attackSlot = async (deadline: number) => {
      while (Date.now() < deadline) {
        const res = await fetch(`${server.url}/auth/v1/user`, {
          method: 'PUT',
          headers: {
            apikey: server.config.projectApiKey,
            authorization: `Bearer ${attacker.accessToken}`,
            'content-type': 'application/json',
          },
          body: JSON.stringify({ password: `attacker password ${attempt++ % 7}` }),
        });
        await res.arrayBuffer();
        attackStatuses.set(res.status, (attackStatuses.get(res.status) ?? 0) + 1);
      }
    };

    const failures: string[] = [];
    const signInLoop = async (offset: number, until: number, sink: number[]) => {
      let i = offset;
      while (Date.now() < until) {
        const user = neighbours[i % neighbours.length]!;
        const started = performance.now();
        const res = await fetch(`${server.url}/auth/v1/token?grant_type=password`, {
          method: 'POST',
          headers: { apikey: server.config.projectApiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ email: user.email, password: PASSWORD }),
        });
        await res.arrayBuffer();
        sink.push(performance.now() - started);
        if (res.status !== 200) failures.push(`sign-in ${res.status}`);
        i += 2;
      }
    };

    // The neighbours alone first: what a sign-in takes on this machine now.
    const quiet: number[] = [];
    const quietUntil = Date.now() + QUIET_SECONDS * 1000;
    await Promise.all([signInLoop(0, quietUntil, quiet), signInLoop(1, quietUntil, quiet)]);

    const latencies: number[] = [];
    const deadline = Date.now() + ATTACK_SECONDS * 1000;
    const attack = Array.from({ length: ATTACK_CONCURRENCY }, () => attackSlot(deadline));
    // The attack is under way first: its 48 connections opened, the account's share taken.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await Promise.all([...attack, signInLoop(0, deadline, latencies), signInLoop(1, deadline, latencies)]);

    quiet.sort((a, b) => a - b);
    latencies.sort((a, b) => a - b);
    console.log(
      `hostile password changes: alone ${quiet.length} sign-ins, p50 ${percentile(quiet, 50).toFixed(1)} ms, ` +
        `p99 ${percentile(quiet, 99).toFixed(1)} ms; under attack ${latencies.length} sign-ins, p50 ${percentile(latencies, 50).toFixed(1)} ms, ` +
        `p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${(latencies.at(-1) ?? 0).toFixed(1)} ms; ` +
        `attacker statuses ${JSON.stringify(Object.fromEntries(attackStatuses))}`,
    );
    expect(failures).toEqual([]);
    expect(latencies.length).toBeGreaterThan(20);
    expect(percentile(latencies, 99)).toBeLessThan(1000);
    // The attacker was answered throughout: some changes made, the rest refused, no outage.
    expect(attackStatuses.get(200) ?? 0).toBeGreaterThan(0);
    expect([...attackStatuses.keys()].every((s) => [200, 422, 429].includes(s))).toBe(true);

    // Nothing left queued or running once the attack is over.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(server.identity.deps.passwords.queue.stats()).toEqual({ running: 0, queued: 0, callers: 0 });
    const activity = await server.pool.query(
      `select state, left(query, 120) as query from pg_stat_activity
       where datname = current_database() and pid <> pg_backend_pid() and state <> 'idle'
         and backend_type = 'client backend'`,
    );
    expect(activity.rows).toEqual([]);
    gc();
    const after = process.memoryUsage().heapUsed;
    console.log(
      `hostile password changes: heap ${(baseline / 1e6).toFixed(1)} MB before, ${(after / 1e6).toFixed(1)} MB after`,
    );
    expect(after - baseline).toBeLessThan(32 * 1024 * 1024);
  },
  (QUIET_SECONDS + ATTACK_SECONDS) * 1000 + 60_000,
);
