// CPU time of a process and its direct children, from /proc (Linux).

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Linux's USER_HZ: /proc reports CPU time in these ticks. */
const TICKS_PER_S = 100;

/** CPU seconds (user + system) used so far by a process and its direct children, from /proc; undefined elsewhere. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    let children: number[] = [];
    try {
      children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
        .split('\n')
        .map(Number)
        .filter((n) => n > 0);
    } catch {
      // ps exits 1 when the process has no children.
    }
    let ticks = 0;
    for (const id of [pid, ...children]) {
      // Fields after the command name (which is in parentheses): utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${id}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    }
    return ticks / TICKS_PER_S;
  } catch {
    return undefined;
  }
}
