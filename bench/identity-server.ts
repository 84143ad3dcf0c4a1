// Benchmark server process: the real platform app on the given database, plus one extra route,
// POST /bench/jwt: one durable single-row write (its own transaction, committed to the WAL) and
// one signed access token. That is the floor of a refresh grant, which must write durably and
// sign; it is served by the same process and HTTP stack, so the ratio shows what the grant costs
// beyond it. GET /bench/heap answers the live heap after a full collection (when started with
// --expose-gc): what the mixed load judges memory growth by.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/server/config.js';
import { createPool, poolOptionsFrom } from '../src/server/db/pool.js';
import { signAccessToken } from '../src/server/identity/access-tokens.js';
import { createLogger } from '../src/server/logger.js';
import { createPlatform } from '../src/server/platform.js';

const config = await loadConfig(process.env);
const pool = createPool(config.databaseUrl!, poolOptionsFrom(config.database));
const { app, listener, signer } = createPlatform({ config, pool, logger: createLogger('silent') });
await pool.query(
  'create table if not exists bench_writes (id bigserial primary key, sub uuid not null, at timestamptz not null default now())',
);

app.post('/bench/jwt', async (c) => {
  const body = (await c.req.json()) as { sub: string };
  await pool.query({
    name: 'bench_write',
    text: 'insert into bench_writes (sub) values ($1)',
    values: [body.sub],
  });
  const { token, expiresAt } = await signAccessToken(signer, {
    userId: body.sub,
    aud: 'authenticated',
    role: 'authenticated',
    email: 'bench@example.com',
    phone: '',
    appMetadata: { provider: 'email', providers: ['email'] },
    userMetadata: {},
    isAnonymous: false,
    sessionId: body.sub,
    aal: 'aal1',
    amr: [{ method: 'password', timestamp: 0 }],
  });
  return c.json({ access_token: token, token_type: 'bearer', expires_in: 3600, expires_at: expiresAt });
});

// What is still reachable after a full collection: unlike the resident set, which follows the
// collector's cycles, this only grows when something is kept.
app.get('/bench/heap', (c) => {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) return c.json({ error: 'start the server with --expose-gc' }, 500);
  collect();
  const { heapUsed, external } = process.memoryUsage();
  return c.json({ heapUsed, external });
});

const server = createServer(listener);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  void pool.end().then(() => process.exit(0));
});
