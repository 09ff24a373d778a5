import { readFile } from 'node:fs/promises';

/**
 * CPU time of another process (the dev server) from /proc, in milliseconds; undefined
 * where there is no /proc. Fields 14 and 15 of /proc/PID/stat are utime and stime in
 * clock ticks, after the command name, which may itself contain spaces and parentheses.
 */
export async function processCpuMs(pid: number): Promise<number | undefined> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state), so utime (14) and stime (15) are at 11 and 12.
  const ticks = Number(fields[11]) + Number(fields[12]);
  // USER_HZ is 100 on every Linux the project runs on (x86-64, arm64).
  return Number.isFinite(ticks) ? ticks * 10 : undefined;
}
