// The machine a benchmark ran on and how busy it was: CPU, cores, memory, Node, platform, load average.

import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';

/**
 * `AMD EPYC 7B13 x 2, 8 GiB, Node v20.20.2 (V8 11.3), linux/x64`: printed beside every table.
 * Node and its V8 change the figures (the JIT, the HTTP server and streams come with Node), so a
 * figure is compared only with figures measured on the same Node.
 */
export function describeMachine(): string {
  const cpu = cpus();
  const model = (cpu[0]?.model ?? 'unknown cpu').replace(/\s+/g, ' ').trim();
  return `${model} x ${cpu.length}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version} (V8 ${process.versions.v8.split('.').slice(0, 2).join('.')}), ${process.platform}/${process.arch}`;
}

/** The load average now: other work on the machine lowers throughput figures (CPU per request much less). */
export function describeLoad(): string {
  return `${loadavg()
    .map((value) => value.toFixed(2))
    .join(', ')} (1, 5, 15 min) on ${availableParallelism()} cores`;
}
