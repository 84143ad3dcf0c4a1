// In charge of running the embedded PostgreSQL for one command in a session of its own (started
// detached by db-context.ts): Ctrl-C at the terminal reaches every process of the foreground
// group, and PostgreSQL takes SIGINT as "shut down now", so a server started beside psql would
// stop when someone cancels a query. It prints the server's URL once ready and stops it when the
// command closes its stdin (or dies, which closes it too).
import { startEmbeddedPostgres } from '../db/embedded.js';

const dataDir = process.argv[2];
if (!dataDir) {
  process.stderr.write('usage: embedded-session.ts <postgres data folder>\n');
  process.exit(2);
}
const server = await startEmbeddedPostgres({ dataDir });
process.stdout.write(`${server.url}\n`);
process.stdin.resume();
process.stdin.on('close', () => {
  void server.stop().then(() => process.exit(0));
});
