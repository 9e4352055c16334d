import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (`getconf CLK_TCK`: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** utime + stime and the parent pid of one process from /proc (undefined when it is gone or unreadable). */
function stat(pid: number): { ppid: number; ticks: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is parenthesised and may hold spaces: fields are counted after its `)`.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/** CPU seconds used so far by `pid` (0 when unreadable, e.g. not Linux). */
export function cpuSecondsOf(pid: number): number {
  return (stat(pid)?.ticks ?? 0) / TICKS_PER_SECOND;
}

/**
 * CPU seconds used so far by the PostgreSQL server whose postmaster is `postmasterPid`: its backends and
 * auxiliary processes (its children; at most a few hundred /proc entries are read). A backend that exited
 * takes its ticks with it, so this is for differences over a window in which the pool keeps its connections.
 */
export function clusterCpuSeconds(postmasterPid: number): number {
  let ticks = stat(postmasterPid)?.ticks ?? 0;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const s = stat(pid);
    if (s?.ppid === postmasterPid) ticks += s.ticks;
  }
  return ticks / TICKS_PER_SECOND;
}

/** The postmaster's pid from its data directory (`postmaster.pid`'s first line). */
export function postmasterPidOf(dataDir: string): number {
  return Number(readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[0]);
}
