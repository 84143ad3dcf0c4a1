// Resumable uploads (TUS at /storage/v1/upload/resumable) as tus-js-client drives them, registered
// for a backend: multi-chunk uploads to a user's folder and to a workspace, resuming after a cut,
// the signed variant, every refusal (changing nothing), nothing visible before the last byte,
// termination, expiry, and the policies checked again on completion. The local-disk suite runs
// them all; the S3 suite runs the ones whose bytes touch the backend.
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { SupabaseClient } from '@supabase/supabase-js';
import { syncPlanStorageLimits } from '../../src/server/storage/plan-bytes.js';
import { expireUploads } from '../../src/server/storage/resumable-uploads.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';
import {
  CHUNK,
  fileOf,
  MB,
  tusFetch,
  tusMetadata,
  tusUpload,
  uploadsInProgress,
} from './resumable-support.js';
import { startStorageServer, type StorageTestServer } from './support.js';

const USER_BUCKET = 'user-files';
const own = `bucket_id = '${USER_BUCKET}' and (storage.foldername(name))[1] = (select auth.uid())::text`;

export function resumableScenarios(backend: 'local' | 's3', scope: 'all' | 'backend'): void {
  let server: StorageTestServer;
  let alice: SignedIn;
  let bob: SignedIn;
  let aliceWs: string;
  let bobWs: string;
  // The S3 suite registers only the scenarios whose bytes touch the backend.
  const all = (name: string, fn: () => Promise<void>) => {
    if (scope === 'all') test(name, fn);
  };

  const bearer = (user: SignedIn) => ({ authorization: `Bearer ${user.accessToken}` });
  const meta = (name: string, extra: Record<string, string> = {}) => ({
    bucketName: USER_BUCKET,
    objectName: name,
    contentType: 'application/octet-stream',
    ...extra,
  });
  const download = async (user: SignedIn, bucket: string, name: string) => {
    const { data, error } = await (user.client as SupabaseClient).storage.from(bucket).download(name);
    if (error) throw error;
    return Buffer.from(await data.arrayBuffer());
  };
  const objectRow = async (bucket: string, name: string) =>
    (
      await server.pool.query<{
        version: string;
        owner_id: string | null;
        metadata: Record<string, unknown>;
        user_metadata: Record<string, unknown> | null;
      }>(
        'select version, owner_id, metadata, user_metadata from storage.objects where bucket_id = $1 and name = $2',
        [bucket, name],
      )
    ).rows[0];
  /** Creates an upload by raw POST; answers its URL. */
  const create = async (user: SignedIn, name: string, length: number, extra: Record<string, string> = {}) => {
    const response = await tusFetch(server, 'POST', '', {
      ...bearer(user),
      'upload-length': String(length),
      'upload-metadata': tusMetadata(meta(name, extra)),
    });
    expect(response.status, await response.clone().text()).toBe(201);
    return response.headers.get('location')!;
  };
  const patch = (
    user: SignedIn,
    url: string,
    offset: number,
    body: Buffer,
    extra: Record<string, string> = {},
  ) =>
    tusFetch(
      server,
      'PATCH',
      url,
      {
        ...bearer(user),
        'content-type': 'application/offset+octet-stream',
        'upload-offset': String(offset),
        ...extra,
      },
      body,
    );
  /** What the server holds: uploads in progress and stored objects, for "nothing changed". */
  const state = async () => {
    await server.drainDeletions();
    return { uploads: await uploadsInProgress(server), stored: await server.storedCount() };
  };

  beforeAll(async () => {
    server = await startStorageServer({ STORAGE_MAX_UPLOAD_BYTES: String(64 * MB) }, { backend });
    // A free workspace keeps 40 MB of files (set at start-up from FREE_PLAN_STORAGE_BYTES).
    await syncPlanStorageLimits(server.pool, [{ plan: 'free', maxBytes: 40 * MB }]);
    await server.adminClient().storage.createBucket(USER_BUCKET);
    for (const [op, clause] of [
      ['insert', `with check (${own})`],
      ['select', `using (${own})`],
      ['update', `using (${own}) with check (${own})`],
    ] as const) {
      await server.pool.query(
        `create policy user_files_${op} on storage.objects for ${op} to authenticated ${clause}`,
      );
    }
    alice = await signUp(server, 'tus-alice');
    bob = await signUp(server, 'tus-bob');
    aliceWs = await workspace(server, alice, 'Alice Resumable Co');
    bobWs = await workspace(server, bob, 'Bob Resumable Co');
  }, 60_000);
  afterAll(async () => server?.close());

  all('OPTIONS answers the protocol: version, extensions, the largest upload', async () => {
    const response = await fetch(`${server.url}/storage/v1/upload/resumable`, { method: 'OPTIONS' });
    expect(response.status).toBe(204);
    expect(response.headers.get('tus-version')).toBe('1.0.0');
    expect(response.headers.get('tus-resumable')).toBe('1.0.0');
    expect(response.headers.get('tus-extension')).toBe(
      'creation,creation-with-upload,termination,expiration',
    );
    expect(response.headers.get('tus-max-size')).toBe(String(64 * MB));
    expect(response.headers.get('access-control-allow-headers')).toMatch(/x-signature/);
    expect(response.headers.get('access-control-allow-methods')).toMatch(/PATCH/);
  });

  test('a 15 MB file in 6 MB chunks to a user folder arrives whole, with its metadata and owner', async () => {
    const file = fileOf(15 * MB, 1);
    const name = `${alice.id}/film.bin`;
    const requests: { method: string; offset: string | undefined }[] = [];
    const outcome = await tusUpload(server, file, {
      headers: { ...bearer(alice), 'x-upsert': 'true' },
      metadata: meta(name, {
        contentType: 'video/mp4',
        cacheControl: '3600',
        metadata: JSON.stringify({ take: 3 }),
      }),
      requests,
    });
    expect(outcome.error).toBeNull();
    expect(requests.map((r) => `${r.method} ${r.offset ?? ''}`)).toEqual([
      'POST ',
      'PATCH 0',
      `PATCH ${CHUNK}`,
      `PATCH ${2 * CHUNK}`,
    ]);
    expect((await download(alice, USER_BUCKET, name)).equals(file)).toBe(true);
    const row = await objectRow(USER_BUCKET, name);
    expect(row).toMatchObject({
      owner_id: alice.id,
      metadata: { size: 15 * MB, mimetype: 'video/mp4', cacheControl: 'max-age=3600' },
      user_metadata: { take: 3 },
    });
    // The URL is Supabase's: the endpoint, then base64url of bucket/name/version.
    const id = outcome.url!.split('/').pop()!;
    expect(outcome.url).toBe(`${server.url}/storage/v1/upload/resumable/${id}`);
    expect(Buffer.from(id, 'base64url').toString()).toBe(`${USER_BUCKET}/${name}/${row!.version}`);
    expect(await uploadsInProgress(server)).toEqual([]);
  });

  test("a 15 MB file to a workspace's files arrives whole and counts against its plan", async () => {
    const file = fileOf(15 * MB, 2);
    const requests: { method: string; offset: string | undefined }[] = [];
    const outcome = await tusUpload(server, file, {
      headers: bearer(alice),
      metadata: { bucketName: 'workspace-files', objectName: `${aliceWs}/big.bin` },
      // As Supabase's guide configures it: the first chunk goes with the creation request.
      uploadDataDuringCreation: true,
      requests,
    });
    expect(outcome.error).toBeNull();
    expect(requests.map((r) => `${r.method} ${r.offset ?? ''}`)).toEqual([
      'POST ',
      `PATCH ${CHUNK}`,
      `PATCH ${2 * CHUNK}`,
    ]);
    expect((await download(alice, 'workspace-files', `${aliceWs}/big.bin`)).equals(file)).toBe(true);
    const used = await server.pool.query<{ used: string }>('select tenantry.storage_bytes_used($1) as used', [
      aliceWs,
    ]);
    expect(Number(used.rows[0]!.used)).toBeGreaterThanOrEqual(15 * MB);
  });

  test('nothing is visible before the last byte; parts are kept in the backend, not in a row', async () => {
    const file = fileOf(8 * MB, 3);
    const name = `${alice.id}/pending.bin`;
    const before = await server.storedCount();
    const url = await create(alice, name, file.length);
    const first = await patch(alice, url, 0, file.subarray(0, CHUNK));
    expect(first.status).toBe(204);
    expect(first.headers.get('upload-offset')).toBe(String(CHUNK));
    expect(first.headers.get('upload-expires')).toMatch(/GMT$/);

    expect(await objectRow(USER_BUCKET, name)).toBeUndefined();
    const files = (alice.client as SupabaseClient).storage.from(USER_BUCKET);
    expect((await files.list(alice.id)).data?.map((o) => o.name)).not.toContain('pending.bin');
    expect((await files.download(name)).error).toBeTruthy();
    expect(await server.storedCount()).toBe(before + 1);

    const head = await tusFetch(server, 'HEAD', url, bearer(alice));
    expect(head.status).toBe(200);
    expect(head.headers.get('upload-offset')).toBe(String(CHUNK));
    expect(head.headers.get('upload-length')).toBe(String(file.length));
    expect(head.headers.get('cache-control')).toBe('no-store');

    const last = await patch(alice, url, CHUNK, file.subarray(CHUNK));
    expect(last.status).toBe(204);
    expect(last.headers.get('upload-offset')).toBe(String(file.length));
    expect((await download(alice, USER_BUCKET, name)).equals(file)).toBe(true);
    await server.drainDeletions();
    // The parts are gone; the object alone remains.
    expect(await server.storedCount()).toBe(before + 1);
  });

  test('an interrupted upload resumes from the server offset with a new client', async () => {
    const file = fileOf(15 * MB, 4);
    const name = `${alice.id}/resumed.bin`;
    // The first client stops once its first chunk is acknowledged.
    const first = await tusUpload(server, file, {
      headers: bearer(alice),
      metadata: meta(name),
      onChunkComplete: (accepted, upload) => {
        if (accepted >= CHUNK) void upload.abort();
      },
    });
    expect(first.error?.message).toBe('aborted');
    expect(first.url).toBeTruthy();
    // Then a chunk is cut mid-way (2 of its 6 MB sent, the connection dropped): none of it is kept.
    const url = new URL(first.url!);
    await new Promise<void>((resolve) => {
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write(
          [
            `PATCH ${url.pathname} HTTP/1.1`,
            `Host: ${url.host}`,
            `Authorization: Bearer ${alice.accessToken}`,
            'Tus-Resumable: 1.0.0',
            'Content-Type: application/offset+octet-stream',
            `Upload-Offset: ${CHUNK}`,
            `Content-Length: ${CHUNK}`,
            '',
            '',
          ].join('\r\n'),
        );
        socket.write(file.subarray(CHUNK, CHUNK + 2 * MB), () => setTimeout(() => socket.destroy(), 200));
      });
      socket.on('close', () => resolve());
      socket.on('error', () => undefined);
    });
    expect(await objectRow(USER_BUCKET, name)).toBeUndefined();
    // The cut request may still be ending on the server; the offset stays at the first chunk.
    await new Promise((r) => setTimeout(r, 300));
    const head = await tusFetch(server, 'HEAD', first.url!, bearer(alice));
    expect(head.headers.get('upload-offset')).toBe(String(CHUNK));
    expect((await uploadsInProgress(server)).find((u) => u.name === name)).toEqual({
      name,
      offset: CHUNK,
      parts: 1,
    });

    const requests: { method: string; offset: string | undefined }[] = [];
    const second = await tusUpload(server, file, {
      headers: bearer(alice),
      metadata: meta(name),
      uploadUrl: first.url!,
      requests,
    });
    expect(second.error).toBeNull();
    // It asked where to go on, and sent only what the server did not have.
    expect(requests.map((r) => `${r.method} ${r.offset ?? ''}`)).toEqual([
      'HEAD ',
      `PATCH ${CHUNK}`,
      `PATCH ${2 * CHUNK}`,
    ]);
    expect((await download(alice, USER_BUCKET, name)).equals(file)).toBe(true);
  });

  all('the signed variant: x-signature from createSignedUploadUrl authorises the upload', async () => {
    const name = `${alice.id}/signed.bin`;
    const files = (alice.client as SupabaseClient).storage.from(USER_BUCKET);
    const { data, error } = await files.createSignedUploadUrl(name);
    expect(error).toBeNull();
    const file = fileOf(7 * MB, 5);
    const outcome = await tusUpload(server, file, {
      variant: '/sign',
      headers: { 'x-signature': data!.token },
      metadata: meta(name, { contentType: 'image/png' }),
    });
    expect(outcome.error).toBeNull();
    expect(outcome.url).toMatch(/\/storage\/v1\/upload\/resumable\/sign\/[A-Za-z0-9_-]+$/);
    expect((await download(alice, USER_BUCKET, name)).equals(file)).toBe(true);
    expect(await objectRow(USER_BUCKET, name)).toMatchObject({
      owner_id: alice.id,
      metadata: { mimetype: 'image/png' },
    });

    const missing = await tusUpload(server, file, { variant: '/sign', metadata: meta(`${alice.id}/s2.bin`) });
    expect([missing.status, missing.body]).toEqual([400, 'Missing x-signature header']);
    // A token for another path, or no token at all, creates nothing.
    const other = await tusUpload(server, file, {
      variant: '/sign',
      headers: { 'x-signature': data!.token },
      metadata: meta(`${alice.id}/elsewhere.bin`),
    });
    expect([other.status, other.body]).toEqual([400, 'Invalid signature']);
    expect(await objectRow(USER_BUCKET, `${alice.id}/s2.bin`)).toBeUndefined();
    expect(await uploadsInProgress(server)).toEqual([]);
  });

  all('refusals answer as Supabase does and change nothing', async () => {
    await server.adminClient().storage.createBucket('small-images', {
      public: false,
      fileSizeLimit: 1 * MB,
      allowedMimeTypes: ['image/*'],
    });
    await server.pool.query(
      `create policy small_images_insert on storage.objects for insert to authenticated with check (bucket_id = 'small-images')`,
    );
    const before = await state();
    const post = async (headers: Record<string, string>, metadata: Record<string, string>, length = 10) => {
      const response = await tusFetch(server, 'POST', '', {
        ...headers,
        'upload-length': String(length),
        'upload-metadata': tusMetadata(metadata),
      });
      return [response.status, await response.text()];
    };
    // No token: anonymous, whom no policy lets write.
    expect(await post({}, meta(`${alice.id}/anon.bin`))).toEqual([
      403,
      'new row violates row-level security policy',
    ]);
    // A token that is not one: refused before the protocol, in storage's own body, as Supabase does.
    const [status, text] = await post({ authorization: 'Bearer not-a-token' }, meta(`${alice.id}/x.bin`));
    expect(status).toBe(400);
    expect(JSON.parse(text as string)).toMatchObject({ statusCode: '403', code: 'AccessDenied' });
    const headWithBadToken = await tusFetch(server, 'HEAD', '/c29tZQ', {
      authorization: 'Bearer not-a-token',
    });
    expect(headWithBadToken.status).toBe(400);
    // Another user's folder, another workspace's folder: the policies refuse.
    expect(await post(bearer(bob), meta(`${alice.id}/planted.bin`))).toEqual([
      403,
      'new row violates row-level security policy',
    ]);
    expect(
      await post(bearer(alice), { bucketName: 'workspace-files', objectName: `${bobWs}/planted.bin` }),
    ).toEqual([403, 'new row violates row-level security policy']);
    // Too large for the bucket, the server, or the workspace's plan, by the declared length.
    expect(
      await post(
        bearer(alice),
        { bucketName: 'small-images', objectName: 'big.png', contentType: 'image/png' },
        2 * MB,
      ),
    ).toEqual([413, 'Maximum size exceeded\n']);
    expect(await post(bearer(alice), meta(`${alice.id}/huge.bin`), 65 * MB)).toEqual([
      413,
      'Maximum size exceeded\n',
    ]);
    expect(
      await post(
        bearer(alice),
        { bucketName: 'workspace-files', objectName: `${aliceWs}/over.bin` },
        45 * MB,
      ),
    ).toEqual([413, "This workspace has reached its plan's storage limit"]);
    // A type the bucket does not take.
    expect(
      await post(bearer(alice), {
        bucketName: 'small-images',
        objectName: 'notes.txt',
        contentType: 'text/plain',
      }),
    ).toEqual([415, 'mime type text/plain is not supported']);
    // No such bucket; no metadata; no length; not speaking tus.
    expect(await post(bearer(alice), { bucketName: 'nope', objectName: 'a.bin' })).toEqual([
      404,
      'Bucket not found',
    ]);
    expect((await post(bearer(alice), {}))[0]).toBe(400);
    const noLength = await tusFetch(server, 'POST', '', {
      ...bearer(alice),
      'upload-metadata': tusMetadata(meta(`${alice.id}/n.bin`)),
    });
    expect([noLength.status, await noLength.text()]).toEqual([
      400,
      'Upload-Length or Upload-Defer-Length header required\n',
    ]);
    const noTus = await fetch(`${server.url}/storage/v1/upload/resumable`, {
      method: 'POST',
      headers: {
        ...bearer(alice),
        'upload-length': '1',
        'upload-metadata': tusMetadata(meta(`${alice.id}/t.bin`)),
      },
    });
    expect([noTus.status, await noTus.text()]).toEqual([412, 'Tus-Resumable Required\n']);
    expect(await state()).toEqual(before);

    // On an upload in progress: a wrong offset, more bytes than declared, another caller.
    const url = await create(alice, `${alice.id}/ten.bin`, 10);
    const during = await state();
    const wrongOffset = await patch(alice, url, 5, Buffer.from('abcde'));
    expect([wrongOffset.status, await wrongOffset.text()]).toEqual([409, 'Upload-Offset conflict\n']);
    const declaredTooMuch = await patch(alice, url, 0, Buffer.alloc(20, 1));
    expect([declaredTooMuch.status, await declaredTooMuch.text()]).toEqual([413, "upload's size exceeded\n"]);
    // Streamed without a declared length: cut at the eleventh byte.
    const streamed = await fetch(url, {
      method: 'PATCH',
      headers: {
        ...bearer(alice),
        'tus-resumable': '1.0.0',
        'content-type': 'application/offset+octet-stream',
        'upload-offset': '0',
      },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new Uint8Array(6).fill(1));
          controller.enqueue(new Uint8Array(14).fill(2));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect([streamed.status, await streamed.text()]).toEqual([413, 'Maximum size exceeded\n']);
    const stolen = await patch(bob, url, 0, Buffer.alloc(10, 1));
    expect(stolen.status).toBe(403);
    expect((await tusFetch(server, 'HEAD', url, bearer(bob))).status).toBe(403);
    const wrongType = await patch(alice, url, 0, Buffer.alloc(10, 1), { 'content-type': 'text/plain' });
    expect(wrongType.status).toBe(400);
    expect(await state()).toEqual(during);
    expect((await tusFetch(server, 'HEAD', url, bearer(alice))).headers.get('upload-offset')).toBe('0');
    // A made-up upload id is not found.
    const madeUp = Buffer.from(`${USER_BUCKET}/${alice.id}/x.bin/${crypto.randomUUID()}`).toString(
      'base64url',
    );
    expect((await tusFetch(server, 'HEAD', `/${madeUp}`, bearer(alice))).status).toBe(404);
    expect((await tusFetch(server, 'DELETE', url, bearer(alice))).status).toBe(204);
  });

  all('two chunks sent at once from the same offset: one is kept, the other is a conflict', async () => {
    const before = await state();
    const url = await create(alice, `${alice.id}/raced.bin`, 3 * MB);
    const [a, b] = await Promise.all([
      patch(alice, url, 0, fileOf(MB, 10)),
      patch(alice, url, 0, fileOf(MB, 11)),
    ]);
    expect([a.status, b.status].sort()).toEqual([204, 409]);
    const head = await tusFetch(server, 'HEAD', url, bearer(alice));
    expect(head.headers.get('upload-offset')).toBe(String(MB));
    // The loser's bytes are gone: one part is stored.
    expect((await state()).stored).toBe(before.stored + 1);
    expect((await tusFetch(server, 'DELETE', url, bearer(alice))).status).toBe(204);
    expect(await state()).toEqual(before);
  });

  test('termination removes the upload and every part it stored', async () => {
    const before = await state();
    const file = fileOf(7 * MB, 6);
    const url = await create(alice, `${alice.id}/dropped.bin`, file.length);
    expect((await patch(alice, url, 0, file.subarray(0, CHUNK))).status).toBe(204);
    expect((await state()).stored).toBe(before.stored + 1);
    const deleted = await tusFetch(server, 'DELETE', url, bearer(alice));
    expect(deleted.status).toBe(204);
    expect((await tusFetch(server, 'HEAD', url, bearer(alice))).status).toBe(404);
    expect((await patch(alice, url, CHUNK, file.subarray(CHUNK))).status).toBe(404);
    expect(await state()).toEqual(before);
    expect(await objectRow(USER_BUCKET, `${alice.id}/dropped.bin`)).toBeUndefined();
  });

  test('an abandoned upload expires: refused at once, then removed with its parts', async () => {
    const before = await state();
    const file = fileOf(7 * MB, 7);
    const url = await create(alice, `${alice.id}/abandoned.bin`, file.length);
    const first = await patch(alice, url, 0, file.subarray(0, CHUNK));
    // Expiry is STORAGE_RESUMABLE_EXPIRY_SECONDS after creation (24 h by default).
    const expires = new Date(first.headers.get('upload-expires')!).getTime();
    expect(expires - Date.now()).toBeGreaterThan(24 * 3600_000 - 120_000);
    await server.pool.query(
      `update internal.storage_resumable_uploads set expires_at = now() - interval '1 second' where name = $1`,
      [`${alice.id}/abandoned.bin`],
    );
    expect((await tusFetch(server, 'HEAD', url, bearer(alice))).status).toBe(410);
    expect((await patch(alice, url, CHUNK, file.subarray(CHUNK))).status).toBe(410);
    expect(await expireUploads(server.pool)).toBe(1);
    expect((await tusFetch(server, 'HEAD', url, bearer(alice))).status).toBe(404);
    expect(await state()).toEqual(before);
    expect(await objectRow(USER_BUCKET, `${alice.id}/abandoned.bin`)).toBeUndefined();
  });

  all("deleting a bucket removes its uploads in progress and their parts' bytes", async () => {
    await server.adminClient().storage.createBucket('ephemeral');
    const before = await state();
    const response = await tusFetch(server, 'POST', '', {
      authorization: `Bearer ${server.config.serviceRoleKey}`,
      'upload-length': String(2 * MB),
      'upload-metadata': tusMetadata({ bucketName: 'ephemeral', objectName: 'half.bin' }),
    });
    const url = response.headers.get('location')!;
    const first = await tusFetch(
      server,
      'PATCH',
      url,
      {
        authorization: `Bearer ${server.config.serviceRoleKey}`,
        'content-type': 'application/offset+octet-stream',
        'upload-offset': '0',
      },
      fileOf(MB, 9),
    );
    expect(first.status).toBe(204);
    expect((await state()).stored).toBe(before.stored + 1);
    // The bucket holds no object, so it may go; the upload goes with it.
    expect((await server.adminClient().storage.deleteBucket('ephemeral')).error).toBeNull();
    expect(await state()).toEqual(before);
  });

  all('the policies are asked again when the last chunk lands: refused then, nothing appears', async () => {
    await server.adminClient().storage.createBucket('revocable');
    await server.pool.query(
      `create policy revocable_insert on storage.objects for insert to authenticated with check (bucket_id = 'revocable')`,
    );
    const before = await state();
    const file = fileOf(7 * MB, 8);
    const response = await tusFetch(server, 'POST', '', {
      ...bearer(alice),
      'upload-length': String(file.length),
      'upload-metadata': tusMetadata({ bucketName: 'revocable', objectName: 'report.bin' }),
    });
    const url = response.headers.get('location')!;
    expect((await patch(alice, url, 0, file.subarray(0, CHUNK))).status).toBe(204);
    await server.pool.query('drop policy revocable_insert on storage.objects');
    const last = await patch(alice, url, CHUNK, file.subarray(CHUNK));
    expect([last.status, await last.text()]).toEqual([403, 'new row violates row-level security policy']);
    expect(await objectRow('revocable', 'report.bin')).toBeUndefined();
    expect(await state()).toEqual(before);
  });

  all(
    'without x-upsert an existing name is refused at creation; with it, the upload replaces it',
    async () => {
      const name = `${alice.id}/twice.bin`;
      const files = (alice.client as SupabaseClient).storage.from(USER_BUCKET);
      expect((await files.upload(name, new Blob(['first']))).error).toBeNull();
      const refused = await tusFetch(server, 'POST', '', {
        ...bearer(alice),
        'upload-length': '6',
        'upload-metadata': tusMetadata(meta(name)),
      });
      expect([refused.status, await refused.text()]).toEqual([409, 'The resource already exists']);
      const replaced = await tusUpload(server, Buffer.from('second'), {
        headers: { ...bearer(alice), 'x-upsert': 'true' },
        metadata: meta(name),
      });
      expect(replaced.error).toBeNull();
      expect((await download(alice, USER_BUCKET, name)).toString()).toBe('second');
    },
  );

  all(
    'data sent with the creation request (creation-with-upload) and an empty file both complete',
    async () => {
      const created = await tusFetch(
        server,
        'POST',
        '',
        {
          ...bearer(alice),
          'upload-length': '11',
          'upload-metadata': tusMetadata(meta(`${alice.id}/at-once.txt`, { contentType: 'text/plain' })),
          'content-type': 'application/offset+octet-stream',
        },
        Buffer.from('hello world'),
      );
      expect(created.status).toBe(201);
      expect(created.headers.get('upload-offset')).toBe('11');
      expect((await download(alice, USER_BUCKET, `${alice.id}/at-once.txt`)).toString()).toBe('hello world');
      const empty = await tusFetch(server, 'POST', '', {
        ...bearer(alice),
        'upload-length': '0',
        'upload-metadata': tusMetadata(meta(`${alice.id}/empty.txt`)),
      });
      expect(empty.status).toBe(201);
      expect((await download(alice, USER_BUCKET, `${alice.id}/empty.txt`)).length).toBe(0);
      expect(await uploadsInProgress(server)).toEqual([]);
    },
  );
}
