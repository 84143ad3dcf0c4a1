// Benchmark server process for realtime: the real platform on the given database behind the
// production HTTP server and its upgrade router (so /realtime/v1/websocket is served as in
// production), plus POST /bench/token: an access token for a given user and session, so the load
// generator can connect a thousand users without a thousand password hashes.
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/server/config.js';
import { createPool, poolOptionsFrom } from '../src/server/db/pool.js';
import { createHttpServer } from '../src/server/http/server.js';
import { signAccessToken } from '../src/server/identity/access-tokens.js';
import { createLogger } from '../src/server/logger.js';
import { createPlatform } from '../src/server/platform.js';
import { REALTIME_WEBSOCKET_PATH } from '../src/server/realtime/service.js';

const config = await loadConfig(process.env);
const pool = createPool(config.databaseUrl!, poolOptionsFrom(config.database));
const logger = createLogger('silent');
const { app, listener, signer, realtime } = createPlatform({ config, pool, logger });

app.post('/bench/token', async (c) => {
  const body = (await c.req.json()) as { sub: string; session: string };
  const { token } = await signAccessToken(signer, {
    userId: body.sub,
    aud: 'authenticated',
    role: 'authenticated',
    email: `${body.sub}@example.com`,
    phone: '',
    appMetadata: { provider: 'email', providers: ['email'] },
    userMetadata: {},
    isAnonymous: false,
    sessionId: body.session,
    aal: 'aal1',
    amr: [{ method: 'password', timestamp: 0 }],
  });
  return c.json({ access_token: token });
});

const http = createHttpServer({ limits: config.http, listener, logger });
http.upgrades.register(REALTIME_WEBSOCKET_PATH, realtime.upgrade);
http.server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(http.server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  void realtime
    .close()
    .catch(() => undefined)
    .then(() => {
      http.server.close();
      return pool.end();
    })
    .then(() => process.exit(0));
});
