// Benchmark support: CPU time spent by processes, read from /proc (Linux), so a benchmark can
// report the work per request of a server and of its PostgreSQL backends. On a machine shared with
// other work that figure moves far less than throughput does.
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on every Linux this runs on

/** User plus system CPU time of the process (all its threads), in ms; 0 once it has gone. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; the fields after it are plain.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

function processIds(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/** The postmaster listening on `port` (started as `postgres -D … -p <port>`), or null. */
export function postmasterOf(port: number): number | null {
  for (const pid of processIds()) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const at = args.indexOf('-p');
      if (/postgres$/.test(args[0] ?? '') && at >= 0 && args[at + 1] === String(port)) return pid;
    } catch {
      // gone meanwhile
    }
  }
  return null;
}

/** CPU time of every process the postmaster started (backends and helpers), in ms. */
export function childrenCpuMs(postmaster: number): number {
  let total = 0;
  for (const pid of processIds()) if (parentOf(pid) === postmaster) total += cpuMs(pid);
  return total;
}
