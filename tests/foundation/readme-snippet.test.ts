// The README's supabase-js example runs on Node.js 20 exactly as written (only its address and
// key swapped for a test server's): it signs up and signs in.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

test('the supabase-js example of the README signs up and signs in', async () => {
  const readme = readFileSync('README.md', 'utf8');
  const snippet = /Try it with supabase-js:\s*```js\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(snippet).toBeDefined();
  const program = snippet!
    .replace("'http://localhost:3000'", `'${server.url}'`)
    .replace("'<public api key printed at start>'", `'${server.config.projectApiKey}'`);
  expect(program).not.toBe(snippet);
  // Inside node_modules' cache folder, so its imports resolve as they would in a project.
  const dir = path.resolve('node_modules/.cache/tenantry-readme');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `snippet-${process.pid}.mjs`);
  writeFileSync(file, program);
  const { stdout } = await promisify(execFile)(process.execPath, [file], { timeout: 20_000 });
  expect(stdout.trim()).toBe('signed in as ada@example.com');
});
