import fs from 'node:fs';

/** Clock ticks per second of /proc's CPU times: 100 on every Linux this runs on (`getconf CLK_TCK`). */
const TICKS_PER_SECOND = 100;

/** CPU milliseconds (user + system, all threads) a process has used so far, read from /proc; this process's own from Node. */
export function cpuMsOf(pid: number): number {
  if (pid === process.pid) {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces and parentheses: the fields start after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** CPU used by each named process while `work` runs, in ms. */
export async function cpuDuring<T>(
  pids: Record<string, number>,
  work: () => Promise<T>,
): Promise<{ result: T; cpuMs: Record<string, number> }> {
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuMsOf(pid)]));
  const result = await work();
  const cpuMs = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuMsOf(pid) - before[name]]));
  return { result, cpuMs };
}
