// One line naming the machine a benchmark ran on: CPU, cores, memory, Node and platform.

import { cpus, totalmem } from 'node:os';

/** `AMD EPYC 7B13 x 2, 8 GiB, Node v20.20.2, linux/x64`: printed beside every table. */
export function describeMachine(): string {
  const cpu = cpus();
  const model = (cpu[0]?.model ?? 'unknown cpu').replace(/\s+/g, ' ').trim();
  return `${model} x ${cpu.length}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${process.platform}/${process.arch}`;
}
