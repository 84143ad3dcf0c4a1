// Storage in the whole process as `npm start` runs it (main.ts): /storage/v1 is served on the one
// port, and the free plan's storage bytes come from FREE_PLAN_STORAGE_BYTES at start-up.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import ws from 'ws';
import { startApp, type AppProcess } from '../support/app-process.js';

let app: AppProcess;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tenantry-storage-process-'));
  // The pages are not what this is about: the process serves the APIs alone.
  app = await startApp({ SKIP_WEB: '1', STORAGE_LOCAL_DIR: dir, FREE_PLAN_STORAGE_BYTES: '100' });
}, 120_000);
afterAll(async () => {
  await app?.stop();
  await rm(dir, { recursive: true, force: true });
});

test('the process serves storage and holds a free workspace to FREE_PLAN_STORAGE_BYTES', async () => {
  const client = createClient(app.url, app.env.PROJECT_API_KEY!, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    realtime: { transport: ws as unknown as typeof WebSocket },
  });
  const signed = await client.auth.signUp({
    email: `process-${Date.now()}@example.com`,
    password: 'correct horse battery',
  });
  expect(signed.error).toBeNull();
  const created = await client.rpc('create_workspace', { name: 'Process Co' });
  expect(created.error).toBeNull();
  const workspaceId = (created.data as { id: string }).id;
  const files = client.storage.from('workspace-files');
  expect((await files.upload(`${workspaceId}/fits.bin`, new Blob([Buffer.alloc(60)]))).error).toBeNull();
  const over = await files.upload(`${workspaceId}/over.bin`, new Blob([Buffer.alloc(60)]));
  expect(over.error).toMatchObject({
    statusCode: '413',
    message: "This workspace has reached its plan's storage limit",
  });
  expect((await files.list(workspaceId)).data?.map((o) => o.name)).toEqual(['fits.bin']);
  expect(await (await files.download(`${workspaceId}/fits.bin`)).data?.arrayBuffer()).toEqual(
    new ArrayBuffer(60),
  );
});
