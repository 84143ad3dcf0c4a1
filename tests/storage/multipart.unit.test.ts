// The streaming multipart reader: whatever the chunking of the body (split at every byte, inside
// delimiters, headers and data), it yields the same fields and file bytes, and a body cut short or
// malformed is an error that stores nothing.
import { Readable } from 'node:stream';
import { expect, test } from 'vitest';
import { readMultipart } from '../../src/server/storage/multipart.js';

async function encoded(form: FormData): Promise<{ boundary: string; bytes: Buffer }> {
  const response = new Response(form);
  const boundary = /boundary=(.+)$/.exec(response.headers.get('content-type')!)![1]!;
  return { boundary, bytes: Buffer.from(await response.arrayBuffer()) };
}

async function read(chunks: Buffer[], boundary: string) {
  return readMultipart(Readable.from(chunks), boundary, async (part, fields) => {
    const received: Buffer[] = [];
    for await (const c of part.stream) received.push(c as Buffer);
    return { type: part.contentType, bytes: Buffer.concat(received), fieldsBefore: [...fields.keys()] };
  });
}

/** A file whose bytes look like the start of a delimiter in places ("\r\n--" and dashes). */
const file = Buffer.concat([Buffer.from('\r\n--\r\n-'), Buffer.alloc(3000, 7), Buffer.from('\r\n------end')]);

test('every split of the body gives the same fields and file', async () => {
  const form = new FormData();
  form.append('cacheControl', '3600');
  form.append('', new Blob([file], { type: 'image/png' }), 'f.png');
  form.append('metadata', '{"a":1}');
  const { boundary, bytes } = await encoded(form);
  for (let size = 1; size <= 97; size += 4) {
    const chunks: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
    const result = await read(chunks, boundary);
    expect(result.file!.bytes.equals(file), `chunks of ${size}`).toBe(true);
    expect(result.file!.type).toBe('image/png');
    expect(result.file!.fieldsBefore).toEqual(['cacheControl']);
    expect(Object.fromEntries(result.fields)).toEqual({ cacheControl: '3600', metadata: '{"a":1}' });
  }
  // And split at each byte around the file's end, where its delimiter begins.
  const end = bytes.indexOf(Buffer.from(`\r\n--${boundary}`), bytes.indexOf(file) + 1);
  for (let cut = end - 8; cut <= end + 8; cut++) {
    const result = await read([bytes.subarray(0, cut), bytes.subarray(cut)], boundary);
    expect(result.file!.bytes.equals(file), `cut at ${cut}`).toBe(true);
  }
});

test('a body cut short is an error, and the file consumer sees its stream fail', async () => {
  const form = new FormData();
  form.append('', new Blob([file]), 'f.bin');
  const { boundary, bytes } = await encoded(form);
  let consumerFailed = false;
  const cut = readMultipart(Readable.from([bytes.subarray(0, bytes.length - 40)]), boundary, async (part) => {
    try {
      for await (const c of part.stream) void c;
    } catch {
      consumerFailed = true;
      throw new Error('stream failed');
    }
    return 'stored';
  });
  await expect(cut).rejects.toThrow();
  expect(consumerFailed).toBe(true);
  await expect(read([Buffer.from('not multipart at all')], boundary)).rejects.toThrow(/Unexpected end/);
});
