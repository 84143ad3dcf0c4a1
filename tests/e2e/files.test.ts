// Files in the app, in a real Chromium against the whole process: a profile picture chosen,
// cropped square from the keyboard and shown in the header and to teammates; a workspace logo in
// the switcher and on the overview; a project's files added several at once (chosen, and dropped
// on the list) with progress, listed, downloaded byte for byte and deleted; files too large or of
// a refused type said so beside their names and stored nowhere; a viewer offered no way to add or
// delete, and refused by storage when trying anyway; storage used shown on the billing page; a
// deleted project's files gone. Screenshots in light and dark, desktop and phone; axe finds no
// serious problem.
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import type { Page } from 'playwright-core';
import ws from 'ws';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  DESKTOP,
  PHONE,
  seriousViolations,
  shoot,
  sidewaysOverflow,
  themedContext,
} from '../support/browser-checks.js';
import {
  confirmDialog,
  createWorkspaceInBrowser,
  signUpInBrowser,
  startBrowserSuite,
  type BrowserSuite,
} from '../support/browser-suite.js';
import { flashAfter } from '../support/flash.js';

/** Small, so a file over it is quick to make; the bucket takes it at start-up. */
const PROJECT_FILE_MAX_BYTES = 200_000;
/** The free plan's bytes: room for the test's files and one more file near the size limit, not two. */
const PLAN_BYTES = 400_000;
const PASSWORD = 'correct horse battery';

let suite: BrowserSuite;
let owner: Page;
let viewer: Page;
let slug: string;
let workspaceId: string;
let projectId: string;

beforeAll(async () => {
  suite = await startBrowserSuite({
    APP_PROJECT_FILE_MAX_BYTES: String(PROJECT_FILE_MAX_BYTES),
    FREE_PLAN_STORAGE_BYTES: String(PLAN_BYTES),
  });
  owner = await signUpInBrowser(suite, 'files-owner@example.com');
  slug = await createWorkspaceInBrowser(suite, owner, 'Files Labs');
  workspaceId = (
    await suite.db.query<{ id: string }>('select id from public.workspaces where slug = $1', [slug])
  ).rows[0]!.id;
  await owner.fill('form:has(button:text("Add project")) input[name=name]', 'Launch');
  await flashAfter(owner, () => owner.click('text=Add project'));
  projectId = (
    await suite.db.query<{ id: string }>('select id from public.projects where workspace_id = $1', [
      workspaceId,
    ])
  ).rows[0]!.id;
  viewer = await signUpInBrowser(suite, 'files-viewer@example.com');
  await suite.db.query(
    `insert into public.workspace_members (workspace_id, user_id, role)
     select $1, id, 'viewer' from auth.users where email = 'files-viewer@example.com'`,
    [workspaceId],
  );
}, 300_000);
afterAll(async () => suite?.stop());

const url = (path: string) => `${suite.app.url}${path}`;
const projectPath = () => `/w/${slug}/projects/${projectId}`;

/** A supabase-js client signed in as one of the test's people (storage as an app would call it). */
async function clientFor(email: string): Promise<SupabaseClient> {
  const client = createClient(suite.app.url, suite.app.env.PROJECT_API_KEY!, {
    auth: { persistSession: false, autoRefreshToken: false },
    realtime: { transport: ws as unknown as typeof WebSocket },
  });
  const { error } = await client.auth.signInWithPassword({ email, password: PASSWORD });
  if (error) throw error;
  return client;
}

/** A PNG drawn in the page: the left half red, the right half blue. */
async function twoColourPng(page: Page, width: number, height: number): Promise<Buffer> {
  const data = await page.evaluate(
    ([w, h]) => {
      const canvas = document.createElement('canvas');
      canvas.width = w;
      canvas.height = h;
      const context = canvas.getContext('2d')!;
      context.fillStyle = '#ff0000';
      context.fillRect(0, 0, w / 2, h);
      context.fillStyle = '#0000ff';
      context.fillRect(w / 2, 0, w / 2, h);
      return canvas.toDataURL('image/png');
    },
    [width, height] as const,
  );
  return Buffer.from(data.split(',')[1]!, 'base64');
}

/** The loaded picture's size and the colour at its centre (read from a same-origin image). */
async function pictureAt(page: Page, selector: string) {
  const img = page.locator(selector).first();
  await img.waitFor();
  await page.waitForFunction(
    (e) => (e as HTMLImageElement).complete && (e as HTMLImageElement).naturalWidth > 0,
    await img.elementHandle(),
  );
  return img.evaluate((e: HTMLImageElement) => {
    const canvas = document.createElement('canvas');
    canvas.width = e.naturalWidth;
    canvas.height = e.naturalHeight;
    const context = canvas.getContext('2d')!;
    context.drawImage(e, 0, 0);
    const [r, g, b] = context.getImageData(e.naturalWidth / 2, e.naturalHeight / 2, 1, 1).data;
    return { width: e.naturalWidth, height: e.naturalHeight, r, g, b, src: e.getAttribute('src') ?? '' };
  });
}

const objects = async (bucket: string, prefix: string) =>
  (
    await suite.db.query<{ name: string; size: string }>(
      `select name, metadata->>'size' as size from storage.objects where bucket_id = $1 and name like $2 order by name`,
      [bucket, `${prefix}%`],
    )
  ).rows;

test(
  'a profile picture is cropped from the keyboard, shown in the header and to teammates, and removed',
  { timeout: 120_000 },
  async () => {
    await owner.goto(url('/settings/profile'));
    const picture = await twoColourPng(owner, 300, 200);
    await owner.setInputFiles('[data-picture-drop] input[type=file]', {
      name: 'me.png',
      mimeType: 'image/png',
      buffer: picture,
    });
    const frame = owner.locator('[data-crop-frame]');
    await frame.waitFor();
    // The frame has the keyboard: one big step right shows more of the right (blue) half.
    await expect(frame.evaluate((e) => e === document.activeElement)).resolves.toBe(true);
    await owner.keyboard.press('Shift+ArrowRight');
    await owner.keyboard.press('+');
    await expect(frame.getAttribute('aria-label')).resolves.toBe('Crop the picture: 125% zoom');
    await shoot(owner, 'profile-picture-crop-light-desktop', { fullPage: false });
    await expect(flashAfter(owner, () => owner.click('text=Save picture'))).resolves.toEqual({
      kind: 'notice',
      text: 'Profile picture saved',
    });

    const ownerId = (
      await suite.db.query<{ id: string; avatar_path: string }>(
        `select id, avatar_path from public.profiles where email = 'files-owner@example.com'`,
      )
    ).rows[0]!;
    expect(ownerId.avatar_path).toMatch(new RegExp(`^${ownerId.id}/[\\w-]+\\.(webp|png)$`));
    expect((await objects('profile-avatars', `${ownerId.id}/`)).map((o) => o.name)).toEqual([
      ownerId.avatar_path,
    ]);

    // In the header, square, cropped where the keys put it (its centre is in the blue half).
    const shown = await pictureAt(owner, '[data-account-menu] img');
    expect(shown).toMatchObject({ width: 512, height: 512, r: 0, b: 255 });
    expect(shown.src).toContain('/storage/v1/object/sign/profile-avatars/');

    // A teammate sees it in the member list; a stranger's link to it is refused.
    await viewer.goto(url(`/w/${slug}/members`));
    const seen = await pictureAt(viewer, `li:has-text("files-owner@example.com") img`);
    expect(seen.width).toBe(512);
    await signUpInBrowser(suite, 'files-stranger@example.com');
    const stranger = await clientFor('files-stranger@example.com');
    expect((await stranger.storage.from('profile-avatars').download(ownerId.avatar_path)).error).toBeTruthy();

    // A second picture replaces the first, whose file goes.
    await owner.goto(url('/settings/profile'));
    await owner.setInputFiles('[data-picture-drop] input[type=file]', {
      name: 'again.png',
      mimeType: 'image/png',
      buffer: picture,
    });
    await flashAfter(owner, () => owner.click('text=Save picture'));
    const replaced = await objects('profile-avatars', `${ownerId.id}/`);
    expect(replaced).toHaveLength(1);
    expect(replaced[0]!.name).not.toBe(ownerId.avatar_path);

    // A file that is not a picture is refused before anything is sent.
    await owner.setInputFiles('[data-picture-drop] input[type=file]', {
      name: 'notes.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('hi'),
    });
    await expect(owner.textContent('[data-picture-error]')).resolves.toBe(
      'This file is not a picture; choose a PNG, JPEG or WebP',
    );

    await owner.click('button:has-text("Remove picture")');
    await expect(flashAfter(owner, () => confirmDialog(owner, 'Remove picture'))).resolves.toEqual({
      kind: 'notice',
      text: 'Profile picture removed; your initials are shown instead',
    });
    await expect(owner.locator('[data-account-menu] img').count()).resolves.toBe(0);
    expect(await objects('profile-avatars', `${ownerId.id}/`)).toEqual([]);
  },
);

test(
  'an owner sets the workspace logo; members see it in the switcher and on the overview',
  { timeout: 120_000 },
  async () => {
    await owner.goto(url(`/w/${slug}/settings`));
    await owner.setInputFiles('[data-picture-drop] input[type=file]', {
      name: 'logo.png',
      mimeType: 'image/png',
      buffer: await twoColourPng(owner, 200, 200),
    });
    await owner.locator('[data-crop-frame]').waitFor();
    await expect(flashAfter(owner, () => owner.click('text=Save logo'))).resolves.toEqual({
      kind: 'notice',
      text: 'Logo saved',
    });
    const logo = await pictureAt(owner, '[data-workspace-switcher] img');
    expect(logo).toMatchObject({ width: 512, height: 512 });
    expect((await objects('workspace-logos', `${workspaceId}/`)).length).toBe(1);

    await viewer.goto(url(`/w/${slug}`));
    expect((await pictureAt(viewer, 'h1 img')).width).toBe(512);
    expect((await pictureAt(viewer, '[data-workspace-switcher] img')).width).toBe(512);
    // A viewer is offered no logo controls, and storage refuses their upload.
    await viewer.goto(url(`/w/${slug}/settings`));
    await expect(viewer.locator('[data-picture-drop]').count()).resolves.toBe(0);
    const asViewer = await clientFor('files-viewer@example.com');
    const planted = await asViewer.storage
      .from('workspace-logos')
      .upload(`${workspaceId}/planted.png`, new Blob([new Uint8Array(8)], { type: 'image/png' }), {
        contentType: 'image/png',
      });
    expect(planted.error).toMatchObject({ statusCode: '403' });
  },
);

test(
  'project files: several added with progress, dropped on the list, downloaded byte for byte, deleted',
  { timeout: 120_000 },
  async () => {
    await owner.goto(url(`/w/${slug}`));
    await owner.click('a:has-text("Launch")');
    await owner.waitForURL(`**${projectPath()}`);
    await expect(owner.textContent('main')).resolves.toContain('No files yet');

    const notes = Buffer.from('The launch notes.\n');
    const data = Buffer.from(Array.from({ length: 150_000 }, (_, i) => (i * 7) % 251));
    await expect(
      flashAfter(owner, () =>
        owner.setInputFiles('[data-file-drop] input[type=file]', [
          { name: 'notes.txt', mimeType: 'text/plain', buffer: notes },
          { name: 'figures.pdf', mimeType: 'application/pdf', buffer: data },
        ]),
      ),
    ).resolves.toEqual({ kind: 'notice', text: '2 files added' });
    await owner.locator('li[data-file="figures.pdf"]').waitFor();
    await expect(owner.textContent('li[data-file="figures.pdf"]')).resolves.toContain(
      '146 KB · added by files-owner@example.com',
    );

    // Dropped on the list.
    const dropped = await owner.evaluateHandle(() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File(['# Dropped\n'], 'dropped.md', { type: 'text/markdown' }));
      return transfer;
    });
    await expect(
      flashAfter(owner, async () => {
        await owner.dispatchEvent('[data-file-drop]', 'dragover', { dataTransfer: dropped });
        await owner.dispatchEvent('[data-file-drop]', 'drop', { dataTransfer: dropped });
      }),
    ).resolves.toEqual({ kind: 'notice', text: 'File added' });
    await owner.locator('li[data-file="dropped.md"]').waitFor();
    const stored = await objects('project-files', `${workspaceId}/${projectId}/`);
    expect(stored.map((o) => o.name.split('/').pop()).sort()).toEqual([
      'dropped.md',
      'figures.pdf',
      'notes.txt',
    ]);

    // Downloaded as the same bytes, as an attachment with its name.
    const href = await owner.getAttribute('li[data-file="figures.pdf"] a', 'href');
    const download = await owner.request.get(url(href!));
    expect(download.status()).toBe(200);
    expect(Buffer.compare(await download.body(), data)).toBe(0);
    expect(download.headers()['content-disposition']).toContain('figures.pdf');

    // Too large and of a refused type: said beside each, nothing sent, the others unaffected.
    await expect(
      flashAfter(owner, () =>
        owner.setInputFiles('[data-file-drop] input[type=file]', [
          { name: 'huge.pdf', mimeType: 'application/pdf', buffer: Buffer.alloc(PROJECT_FILE_MAX_BYTES + 1) },
          { name: 'tool.exe', mimeType: 'application/x-msdownload', buffer: Buffer.from('MZ') },
        ]),
      ),
    ).resolves.toEqual({ kind: 'error', text: '2 files were not added; see why beside them' });
    await expect(owner.textContent('[data-upload="huge.pdf"] [data-upload-error]')).resolves.toBe(
      'The file is larger than 195 KB, the most a file here may be',
    );
    await expect(owner.textContent('[data-upload="tool.exe"] [data-upload-error]')).resolves.toBe(
      'Files of this type (application/x-msdownload) cannot be added here',
    );
    await shoot(owner, 'project-files-errors-light-desktop');
    expect(await objects('project-files', `${workspaceId}/${projectId}/`)).toHaveLength(3);
    // Storage refuses them too, sent around the page.
    const asOwner = await clientFor('files-owner@example.com');
    const bucket = asOwner.storage.from('project-files');
    const big = await bucket.upload(
      `${workspaceId}/${projectId}/x/huge.pdf`,
      new Blob([Buffer.alloc(PROJECT_FILE_MAX_BYTES + 1)], { type: 'application/pdf' }),
    );
    expect(big.error).toMatchObject({ statusCode: '413' });
    const exe = await bucket.upload(
      `${workspaceId}/${projectId}/x/tool.exe`,
      new Blob(['MZ'], { type: 'application/x-msdownload' }),
    );
    expect(exe.error).toMatchObject({ statusCode: '415' });

    // A viewer downloads but is offered no way to add or delete, and storage refuses both.
    await viewer.goto(url(projectPath()));
    await viewer.locator('li[data-file="notes.txt"]').waitFor();
    await expect(viewer.locator('[data-file-drop], button[aria-label^="Delete"]').count()).resolves.toBe(0);
    const viewed = await viewer.request.get(
      url((await viewer.getAttribute('li[data-file="notes.txt"] a', 'href'))!),
    );
    expect((await viewed.body()).toString()).toBe('The launch notes.\n');
    const asViewer = await clientFor('files-viewer@example.com');
    const signed = await asViewer.storage
      .from('project-files')
      .createSignedUploadUrl(`${workspaceId}/${projectId}/v/x.txt`);
    expect(signed.error).toMatchObject({ statusCode: '403' });
    const notesName = stored.find((o) => o.name.endsWith('/notes.txt'))!.name;
    expect((await asViewer.storage.from('project-files').remove([notesName])).data).toEqual([]);
    expect(await objects('project-files', notesName)).toHaveLength(1);

    // The owner deletes one (asked first).
    await owner.goto(url(projectPath()));
    await owner.click('button[aria-label="Delete notes.txt"]');
    await expect(flashAfter(owner, () => confirmDialog(owner, 'Delete file'))).resolves.toEqual({
      kind: 'notice',
      text: 'File deleted',
    });
    await expect(owner.locator('li[data-file="notes.txt"]').count()).resolves.toBe(0);
    expect(await objects('project-files', notesName)).toEqual([]);

    // Two files that each fit the bucket but not both the plan: one is added, the other is
    // refused by storage (the plan's bytes are counted as rows are written) and says why.
    const near = () => Buffer.alloc(190_000, 1);
    await owner.setInputFiles('[data-file-drop] input[type=file]', [
      { name: 'first.pdf', mimeType: 'application/pdf', buffer: near() },
      { name: 'second.pdf', mimeType: 'application/pdf', buffer: near() },
    ]);
    const planRefusal = await owner.waitForSelector('[data-upload] [data-upload-error]');
    await expect(planRefusal.textContent()).resolves.toBe(
      "The workspace's plan has no room for this file; delete files or upgrade the plan",
    );
    const kept = await objects('project-files', `${workspaceId}/${projectId}/`);
    expect(kept.filter((o) => /\/(first|second)\.pdf$/.test(o.name))).toHaveLength(1);
    // Now the plan's room is what binds, and the page says so before anything is sent.
    await owner.reload();
    await expect(owner.textContent('[data-file-drop]')).resolves.toContain(
      "(what the workspace's plan has left)",
    );
    await owner.setInputFiles('[data-file-drop] input[type=file]', [
      { name: 'third.pdf', mimeType: 'application/pdf', buffer: near() },
    ]);
    await expect(owner.textContent('[data-upload="third.pdf"] [data-upload-error]')).resolves.toMatch(
      /^The workspace's plan has \d+ KB of storage left; delete files or upgrade the plan$/,
    );

    // The billing page counts the bytes against the plan.
    await owner.goto(url(`/w/${slug}/billing`));
    await expect(owner.textContent('[data-usage=storage]')).resolves.toMatch(/^3\d\d KB of 391 KB$/);
  },
);

test(
  'pages with files: no serious accessibility problem, no sideways scroll on a phone; screenshots',
  { timeout: 180_000 },
  async () => {
    const cookies = await owner.context().cookies();
    const problems: string[] = [];
    const pages = [
      { name: 'project-files', path: projectPath() },
      { name: 'workspace-settings-logo', path: `/w/${slug}/settings` },
      { name: 'profile-picture', path: '/settings/profile' },
    ];
    for (const theme of ['light', 'dark'] as const) {
      for (const [device, size] of [
        ['desktop', DESKTOP],
        ['phone', PHONE],
      ] as const) {
        const context = await themedContext(suite.browser, { theme, size, url: suite.app.url });
        await context.addCookies(cookies);
        const page = await context.newPage();
        for (const p of pages) {
          await page.goto(url(p.path));
          await page.waitForLoadState('networkidle');
          if (device === 'desktop') {
            for (const v of await seriousViolations(page))
              problems.push(`${p.name} (${theme}): ${v.id} ${v.help} at ${v.targets.slice(0, 3).join(', ')}`);
          } else {
            const overflow = await sidewaysOverflow(page);
            if (overflow.by > 0)
              problems.push(
                `${p.name} (${theme}, phone): scrolls ${overflow.by}px sideways: ${overflow.widest}`,
              );
          }
          await shoot(page, `${p.name}-${theme}-${device}`);
        }
        // The cropper, open.
        await page.goto(url('/settings/profile'));
        await page.setInputFiles('[data-picture-drop] input[type=file]', {
          name: 'me.png',
          mimeType: 'image/png',
          buffer: await twoColourPng(page, 300, 200),
        });
        await page.locator('[data-crop-frame]').waitFor();
        if (device === 'desktop')
          for (const v of await seriousViolations(page))
            problems.push(`cropper (${theme}): ${v.id} ${v.help} at ${v.targets.join(', ')}`);
        else if ((await sidewaysOverflow(page)).by > 0)
          problems.push(`cropper (${theme}, phone) scrolls sideways`);
        await page.locator('[data-cropper]').scrollIntoViewIfNeeded();
        await shoot(page, `profile-picture-crop-${theme}-${device}`, { fullPage: false });
        await context.close();
      }
    }
    expect(problems).toEqual([]);
  },
);

test('deleting a project deletes its files', { timeout: 60_000 }, async () => {
  expect((await objects('project-files', `${workspaceId}/${projectId}/`)).length).toBeGreaterThan(0);
  await owner.goto(url(`/w/${slug}`));
  await owner.click('button[aria-label="Actions for Launch"]');
  await owner.getByRole('menuitem', { name: /Delete/ }).click();
  await expect(flashAfter(owner, () => confirmDialog(owner, 'Delete project'))).resolves.toEqual({
    kind: 'notice',
    text: 'Project deleted',
  });
  expect(await objects('project-files', `${workspaceId}/${projectId}/`)).toEqual([]);
});
