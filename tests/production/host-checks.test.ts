// Start-up warnings about the host: transparent huge pages switched off are reported once, with
// the setting and where to read about it; a host that has them, or no such file, is quiet.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { hugePagesOff, warnAboutHostSettings } from '../../src/server/host-checks.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, stream) };
}

describe('host checks', () => {
  it('reads the kernel setting: only [never] means off', () => {
    expect(hugePagesOff('always madvise [never]\n')).toBe(true);
    expect(hugePagesOff('always [madvise] never\n')).toBe(false);
    expect(hugePagesOff('[always] madvise never\n')).toBe(false);
    expect(hugePagesOff('')).toBe(false);
  });

  it('warns once when huge pages are off, and stays quiet otherwise', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'host-checks-'));
    const off = path.join(dir, 'off');
    const on = path.join(dir, 'on');
    writeFileSync(off, 'always madvise [never]\n');
    writeFileSync(on, 'always [madvise] never\n');

    const warned = capture();
    await warnAboutHostSettings(warned.logger, off);
    expect(warned.lines).toHaveLength(1);
    expect(warned.lines[0]).toMatchObject({ level: 40, setting: 'always madvise [never]', path: off });
    expect(String(warned.lines[0]!.msg)).toMatch(/transparent huge pages are off.*docs\/operations\.md/);

    const quiet = capture();
    await warnAboutHostSettings(quiet.logger, on);
    await warnAboutHostSettings(quiet.logger, path.join(dir, 'missing'));
    expect(quiet.lines).toEqual([]);
  });
});
