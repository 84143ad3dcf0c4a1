// The Dockerfile model that tests/production/container-steps.test.ts builds the image with: it
// refuses what it cannot carry out faithfully, applies .dockerignore as Docker does, and copies
// between stages keeping modification times and links (without which the image would rebuild
// its web app at every start).
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  buildStages,
  contextFiles,
  dockerignoreMatcher,
  parseDockerfile,
  type Builder,
} from '../support/dockerfile.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
// Nothing here changes owners: the folders stay this process's whoever runs it.
const SELF: Builder = {
  root: false,
  user: { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0, name: 'self' },
};
const OLD = new Date('2020-01-02T03:04:05Z');

let scratch: string | undefined;
afterEach(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

describe('the Dockerfile model', () => {
  it('refuses instructions, flags and forms it does not carry out', () => {
    expect(() => parseDockerfile('FROM node:20 AS a\nWORKDIR /app\nADD x ./')).toThrow(/ADD is not modelled/);
    expect(() => parseDockerfile('FROM node:20 AS a\nENTRYPOINT ["node"]')).toThrow(
      /ENTRYPOINT is not modelled/,
    );
    expect(() => parseDockerfile('FROM node:20 AS a\nWORKDIR /app\nCOPY --link a ./')).toThrow(/--link/);
    expect(() => parseDockerfile('FROM node:20 AS a\nWORKDIR /app\nCOPY $X ./')).toThrow(/variables/);
    expect(() => parseDockerfile('FROM node:20\nWORKDIR /app')).toThrow(/needs a name/);
    expect(() => parseDockerfile('FROM node:20 AS a\nRUN true')).toThrow(/before WORKDIR/);
  });

  it('joins continued lines, skips comments inside them and keeps each RUN with its USER and ENV', () => {
    const [stage] = parseDockerfile(
      [
        'FROM node:20 AS a',
        'ENV A=1 B="two words"',
        'USER node',
        'WORKDIR /app',
        'RUN echo \\',
        '# note',
        '  done',
      ].join('\n'),
    );
    expect(stage!.steps).toEqual([
      {
        kind: 'run',
        line: 5,
        command: 'echo done',
        user: 'node',
        workdir: '/app',
        env: { A: '1', B: 'two words' },
      },
    ]);
  });

  it('refuses to run a build step as root', async () => {
    scratch = mkdtempSync(path.join(tmpdir(), 'tenantry-model-'));
    const stages = parseDockerfile('FROM node:20 AS a\nWORKDIR /app\nRUN touch ran');
    await expect(
      buildStages({
        stages,
        context: scratch,
        files: [],
        root: scratch,
        builder: SELF,
        baseEnv: {},
        log: () => {},
      }),
    ).rejects.toThrow(/RUN as root/);
    expect(() => lstatSync(path.join(scratch!, 'a', 'ran'))).toThrow();
  });

  it('applies .dockerignore as Docker does: anchored, folders covering their contents, ! re-including', () => {
    const ignored = dockerignoreMatcher('# c\nnode_modules\n*.log\ndocs/**/*.png\n!docs/keep.png\n');
    expect(ignored('node_modules/pg/index.js')).toBe(true);
    expect(ignored('src/node_modules/x.js')).toBe(false);
    expect(ignored('a.log')).toBe(true);
    expect(ignored('logs/a.log')).toBe(false);
    expect(ignored('docs/screens/deep/a.png')).toBe(true);
    expect(ignored('docs/keep.png')).toBe(false);
  });

  it("sends the image's build what it builds from and nothing installed, built or secret", () => {
    const files = contextFiles(REPO);
    for (const needed of ['package.json', 'package-lock.json', 'next.config.ts', 'src/server/main.ts']) {
      expect(files).toContain(needed);
    }
    expect(files.some((file) => file.startsWith('db/migrations/'))).toBe(true);
    const unwanted = files.filter((file) =>
      /^(node_modules|\.next|\.data|\.git|tests|test-results)\/|^\.env|\.tsbuildinfo$/.test(file),
    );
    expect(unwanted).toEqual([]);
  });

  it('copies from the context and between stages keeping modification times and links', async () => {
    scratch = mkdtempSync(path.join(tmpdir(), 'tenantry-model-'));
    const context = path.join(scratch, 'context');
    mkdirSync(path.join(context, 'src', 'deep'), { recursive: true });
    writeFileSync(path.join(context, 'src', 'deep', 'a.ts'), 'a');
    symlinkSync('deep/a.ts', path.join(context, 'src', 'link.ts'));
    for (const entry of ['src/deep/a.ts', 'src/deep', 'src']) utimesSync(path.join(context, entry), OLD, OLD);
    const root = path.join(scratch, 'stages');
    mkdirSync(root);
    const stages = parseDockerfile(
      [
        'FROM node:20 AS one',
        'WORKDIR /app',
        'COPY src ./src',
        'FROM node:20 AS two',
        'WORKDIR /srv',
        'COPY --from=one /app/src ./src',
      ].join('\n'),
    );
    const folders = await buildStages({
      stages,
      context,
      files: ['src/deep/a.ts', 'src/link.ts'],
      root,
      builder: SELF,
      baseEnv: {},
      log: () => {},
    });
    for (const stage of ['one', 'two']) {
      const copied = path.join(folders.get(stage)!, 'src');
      for (const entry of ['deep/a.ts', 'deep', '.']) {
        expect(lstatSync(path.join(copied, entry)).mtime.toISOString(), `${stage}: ${entry}`).toBe(
          OLD.toISOString(),
        );
      }
      expect(readlinkSync(path.join(copied, 'link.ts'))).toBe('deep/a.ts');
    }
  });
});
