// A guard over the security policies and the embedded store, in a process of its own, for the fuzz test: started with
// --expose-gc, it answers 'memory' over IPC with its memory after a forced collection.

import { startSecurityGuard } from '../helpers/rig-stores.js';

/** A message from the fuzz test. */
export type GuardProcessCommand = 'memory' | 'close';

/** What the process sends: where it listens once started, then one answer per command. */
export type GuardProcessReport =
  | { readonly kind: 'started'; readonly endpoint: string; readonly url: string }
  /** The main thread's V8 heap in use, and the memory of its ArrayBuffers and Buffers (outside that heap). */
  | { readonly kind: 'memory'; readonly heapUsedBytes: number; readonly arrayBuffersBytes: number };

const send = (report: GuardProcessReport): void => void process.send?.(report);
const collect = globalThis.gc;
if (collect === undefined || process.send === undefined) {
  process.stderr.write('guard-process.js runs as a child with an IPC channel, under node --expose-gc\n');
  process.exit(2);
}

const config = JSON.parse(process.argv[2] ?? '{}') as Record<string, unknown>;
const guard = await startSecurityGuard({ name: 'embedded', queryUrl: undefined }, config);
process.on('message', (command: GuardProcessCommand) => {
  if (command === 'memory') {
    // Twice: the first collection's finalizers may free more for the second.
    collect();
    collect();
    const { heapUsed, arrayBuffers } = process.memoryUsage();
    send({ kind: 'memory', heapUsedBytes: heapUsed, arrayBuffersBytes: arrayBuffers });
  } else if (command === 'close') {
    void guard.close().then(() => process.disconnect());
  }
});
send({ kind: 'started', endpoint: guard.endpoint, url: guard.guard.url });
