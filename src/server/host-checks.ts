// In charge of warning at start-up about settings of the host that make the service much slower
// than it needs to be. Today that is one: transparent huge pages switched off, which makes every
// password verify fault in its 19 MiB page by page (decision 0040).
import { readFile } from 'node:fs/promises';
import type { Logger } from './logger.js';

const TRANSPARENT_HUGE_PAGES = '/sys/kernel/mm/transparent_hugepage/enabled';

/** True when the kernel's setting (e.g. "always madvise [never]") has huge pages switched off. */
export function hugePagesOff(setting: string): boolean {
  return setting.includes('[never]');
}

/** Logs a warning for each slow host setting; a host without the file (not Linux) has none. */
export async function warnAboutHostSettings(logger: Logger, path = TRANSPARENT_HUGE_PAGES): Promise<void> {
  const setting = await readFile(path, 'utf8').catch(() => '');
  if (hugePagesOff(setting)) {
    logger.warn(
      { setting: setting.trim(), path },
      'transparent huge pages are off: password sign-ins cost about 1.7 times the CPU; set them to madvise (docs/operations.md)',
    );
  }
}
