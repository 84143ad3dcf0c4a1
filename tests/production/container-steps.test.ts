// Proves the Dockerfile without a container runtime: reads it (tests/support/dockerfile.ts), runs
// each stage's steps in a clean copy of the repository's files as a non-root user, assembles the
// runtime stage as its COPY --from lines say, starts it with its CMD on a fresh database, and
// checks what the image promises: its HEALTHCHECK passes, a page renders, a sign-up works (the
// native parts are in place), the web app is not built again at start, and its STOPSIGNAL drains.
import { spawnSync, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { chmodSync, lchownSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@supabase/supabase-js';
import ws from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildStages,
  contextFiles,
  parseDockerfile,
  type Builder,
  spawnCommand,
  type Command,
} from '../support/dockerfile.js';
import { createTestDatabase, randomKey } from '../support/server.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
// The unprivileged user the steps run as when the suite runs as root (as CI does).
const BUILD_USER = 'tenantry-build';
const MINUTES = 60_000;

function idOf(flag: '-u' | '-g'): number | null {
  const found = spawnSync('id', [flag, BUILD_USER], { encoding: 'utf8' });
  return found.status === 0 ? Number(found.stdout.trim()) : null;
}

/** The non-root user for the steps: this process's own user, or one created for them as root. */
function builder(): Builder {
  if (process.getuid?.() !== 0) {
    const me = userInfo();
    return { root: false, user: { uid: me.uid, gid: me.gid, name: me.username } };
  }
  if (idOf('-u') === null) {
    const added = spawnSync(
      'useradd',
      ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', BUILD_USER],
      { encoding: 'utf8' },
    );
    if (added.error) {
      throw new Error(
        `useradd is needed to create the unprivileged user the image's steps run as (CI has it): ${added.error.message}`,
      );
    }
    // 9: another run created it meanwhile.
    if (added.status !== 0 && added.status !== 9)
      throw new Error(`useradd ${BUILD_USER} failed: ${added.stderr}`);
  }
  return { root: true, user: { uid: idOf('-u')!, gid: idOf('-g')!, name: BUILD_USER } };
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

describe('the container image, built and started from its Dockerfile without a container runtime', () => {
  const dockerfile = readFileSync(path.join(REPO, 'Dockerfile'), 'utf8');
  const stages = parseDockerfile(dockerfile);
  const runtime = stages.at(-1)!;
  let work = '';
  let who: Builder;
  let env: Record<string, string> = {};
  let folder = '';
  let app: ChildProcess | undefined;
  let output = '';
  let exited: Promise<number | null> = Promise.resolve(null);
  let url = '';

  /** Runs a Dockerfile command in the runtime folder as the image's user; resolves its exit code. */
  function run(command: Command, extraEnv: Record<string, string> = {}): Promise<number | null> {
    const child = spawnCommand(command, { cwd: folder, env: { ...env, ...extraEnv }, builder: who });
    // Drained, so a chatty command never stalls on a full pipe.
    child.stdout.resume();
    child.stderr.resume();
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
  }

  beforeAll(async () => {
    who = builder();
    work = mkdtempSync(path.join(tmpdir(), 'tenantry-image-'));
    // The user must reach everything below: the stages, its home and its own npm cache.
    chmodSync(work, 0o755);
    const home = path.join(work, 'home');
    const cache = path.join(work, 'npm-cache');
    for (const dir of [home, cache]) {
      mkdirSync(dir);
      if (who.root) lchownSync(dir, who.user.uid, who.user.gid);
    }
    const stagesRoot = path.join(work, 'stages');
    mkdirSync(stagesRoot);
    chmodSync(stagesRoot, 0o755);
    // What a builder gives a RUN: the image's PATH (here the host's Node), HOME, and the way out.
    const baseEnv: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: home,
      npm_config_cache: cache,
      npm_config_update_notifier: 'false',
    };
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy']) {
      if (process.env[name]) baseEnv[name] = process.env[name];
    }
    const started = Date.now();
    const folders = await buildStages({
      stages,
      context: REPO,
      files: contextFiles(REPO),
      root: stagesRoot,
      builder: who,
      baseEnv,
      log: (line) => console.log(line),
    });
    folder = folders.get(runtime.name)!;
    const size = spawnSync('du', ['-sm', folder], { encoding: 'utf8' }).stdout.split('\t')[0];
    console.log(
      `all stages built in ${((Date.now() - started) / 1000).toFixed(0)} s; runtime stage ${size} MB`,
    );

    // As `docker run -e …` would: production mode on a fresh database, reached over loopback TCP
    // (the suite's cluster keeps its socket in a folder only its own user may enter).
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    env = {
      ...baseEnv,
      ...runtime.env,
      DATABASE_URL: (await createTestDatabase()).replace(/@[^@/]+:(\d+)\//, '@127.0.0.1:$1/'),
      JWT_SECRET: randomKey(),
      PROJECT_API_KEY: randomKey('anon_'),
      SERVICE_ROLE_KEY: randomKey('service_'),
      PAYMENT_WEBHOOK_SECRET: randomKey('whsec_'),
      CRON_SECRET: randomKey(),
      AUTH_AUTOCONFIRM: 'true',
      MAIL_DELIVERY: 'outbox',
      SCHEDULER: 'off',
      PORT: String(port),
      HOST: '127.0.0.1',
      APP_URL: url,
    };
    const starting = Date.now();
    // Its own process group, so that clean-up reaches the server under npm whatever happened.
    const child = spawnCommand(runtime.cmd!, { cwd: folder, env, builder: who, detached: true });
    app = child;
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    // Polled with the image's own health check, as the container runtime would.
    for (;;) {
      if ((await run(runtime.healthcheck!.command)) === 0) break;
      if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${output}`);
      if (Date.now() - starting > 5 * MINUTES) throw new Error(`not ready after 5 minutes:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    console.log(
      `ready (its HEALTHCHECK passing) ${((Date.now() - starting) / 1000).toFixed(1)} s after npm start`,
    );
  }, 60 * MINUTES);

  afterAll(async () => {
    if (app?.pid !== undefined) {
      try {
        process.kill(-app.pid, 'SIGKILL');
      } catch {
        // The group is gone: it stopped by itself.
      }
      await exited;
    }
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('runs as an unprivileged user, exposes its port and checks readiness', () => {
    // The steps ran on this machine's Node: they prove the image only if it is the image's major.
    for (const stage of stages) {
      expect(stage.image, stage.name).toMatch(new RegExp(`^node:${process.versions.node.split('.')[0]}-`));
    }
    expect(runtime.user).not.toMatch(/^(root|0)(:|$)/);
    expect(runtime.expose).toContain(Number(runtime.env.PORT));
    expect(JSON.stringify(runtime.healthcheck?.command)).toContain('/api/health/ready');
    // The container runs what `npm start` runs, as its first process (see the Dockerfile's CMD).
    const start = (
      JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { scripts: { start: string } }
    ).scripts.start;
    expect(start).toBe('tsx src/server/main.ts');
    expect(runtime.cmd).toEqual(['node', '--import', 'tsx', 'src/server/main.ts']);
  });

  it('passes its HEALTHCHECK against the started copy, and fails it where nothing answers', async () => {
    const ready = await fetch(`${url}/api/health/ready`);
    expect(ready.status).toBe(200);
    expect(await run(runtime.healthcheck!.command)).toBe(0);
    expect(await run(runtime.healthcheck!.command, { PORT: String(await freePort()) })).not.toBe(0);
  });

  it('serves the web pages and signs a user up (the native password hashing is installed)', async () => {
    const page = await fetch(`${url}/sign-in`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toMatch(/<html/i);
    const client = createClient(url, env.PROJECT_API_KEY!, {
      auth: { persistSession: false, autoRefreshToken: false },
      realtime: { transport: ws as unknown as typeof WebSocket },
    });
    const { data, error } = await client.auth.signUp({
      email: 'image@example.com',
      password: 'correct horse battery',
    });
    expect(error).toBeNull();
    expect(data.session?.access_token).toBeTruthy();
    // The container's one process (CMD runs node itself): what a memory request is sized from.
    const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${app!.pid}/status`, 'utf8'))?.[1];
    console.log(`resident memory after a page and a sign-up: ${Math.round(Number(rss) / 1024)} MB`);
  });

  it('did not build the web app at start: the build made in the image is the one served', () => {
    expect(output).toContain('Tenantry is running at');
    expect(output).not.toContain('building the web app');
  });

  it('on its STOPSIGNAL finishes the request in flight, takes no new one and exits 0', async () => {
    expect(runtime.stopSignal).toBe('SIGTERM');
    // A sign-in whose body is still arriving when the signal comes (the user signed up above).
    const body = JSON.stringify({ email: 'image@example.com', password: 'correct horse battery' });
    const request = http.request(`${url}/auth/v1/token?grant_type=password`, {
      method: 'POST',
      headers: {
        apikey: env.PROJECT_API_KEY!,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
      },
    });
    const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
      request.once('error', reject);
      request.once('response', (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.once('end', () => resolve({ status: response.statusCode ?? 0, text }));
      });
    });
    request.write(body.slice(0, 10));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const stopping = Date.now();
    app!.kill(runtime.stopSignal as NodeJS.Signals);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await expect(fetch(`${url}/api/health`)).rejects.toThrow();
    expect(app!.exitCode).toBeNull();
    request.end(body.slice(10));
    const { status, text } = await answered;
    expect(status, text).toBe(200);
    expect(JSON.parse(text)).toHaveProperty('access_token');
    const code = await Promise.race([
      exited,
      new Promise((resolve) => setTimeout(() => resolve('still running'), 20_000)),
    ]);
    expect(code, output.slice(-2000)).toBe(0);
    expect(output).toContain('shutting down');
    console.log(
      `stopped ${Date.now() - stopping} ms after ${runtime.stopSignal}, the request in flight answered`,
    );
  }, 60_000);
});
