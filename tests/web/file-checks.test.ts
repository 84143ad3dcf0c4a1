// The checks the pages make before a file is sent, which must say what storage would: a type
// outside the bucket's (families like image/* included, parameters ignored), a file over the
// bucket's size or over the plan's bytes left (said differently: one is fixed by a smaller file,
// the other by freeing room or upgrading), and sizes written as people read them.
import { expect, test } from 'vitest';
import { formatBytes, refusalFor, typeAllowed } from '../../src/app/lib/file-checks.js';
import { mimeAllowed } from '../../src/server/storage/shapes.js';

test('types are allowed as storage allows them', () => {
  const allowed = ['image/*', 'application/pdf'];
  const cases = [
    'image/png',
    'IMAGE/JPEG',
    'image/svg+xml',
    'application/pdf; charset=x',
    'text/plain',
    'application/x-msdownload',
    '',
  ];
  for (const type of cases) expect(typeAllowed(allowed, type), type).toBe(mimeAllowed(allowed, type));
  expect(typeAllowed(null, 'application/x-msdownload')).toBe(true);
  expect(typeAllowed(['*/*'], 'anything/else')).toBe(true);
});

test('a refused file is told why, a fitting one passes', () => {
  const bucket = { maxBytes: 200_000, planBound: false, types: ['text/*', 'application/pdf'] };
  expect(refusalFor(bucket, 200_000, 'application/pdf')).toBeNull();
  expect(refusalFor(bucket, 200_001, 'application/pdf')).toBe(
    'The file is larger than 195 KB, the most a file here may be',
  );
  expect(refusalFor(bucket, 10, 'application/x-msdownload')).toBe(
    'Files of this type (application/x-msdownload) cannot be added here',
  );
  expect(refusalFor(bucket, 10, '')).toBe('Files of this type (unknown) cannot be added here');
  expect(refusalFor({ ...bucket, planBound: true, maxBytes: 1536 }, 2000, 'text/plain')).toBe(
    "The workspace's plan has 1.5 KB of storage left; delete files or upgrade the plan",
  );
});

test('sizes read as people read them', () => {
  expect(formatBytes(0)).toBe('0 bytes');
  expect(formatBytes(1)).toBe('1 byte');
  expect(formatBytes(1023)).toBe('1023 bytes');
  expect(formatBytes(1536)).toBe('1.5 KB');
  expect(formatBytes(150_000)).toBe('146 KB');
  expect(formatBytes(50 * 1024 * 1024)).toBe('50 MB');
  expect(formatBytes(1024 ** 3)).toBe('1 GB');
});
