// The policy worker's entry: reads the policy files and runs the rules off the serving thread, so the proxy keeps serving during a (re)load.

import { createHash } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { attachDerivations } from './attach-derivations.js';
import { PolicyLoadError } from '../policy-load-error.js';
import { readPolicyFiles, readPolicyText } from './read-policy-files.js';
import { readRuleFile } from '../rules/read-rule-file.js';
import { shippedRuleFiles } from '../rules/shipped-rule-files.js';
import { warnAboutRules } from '../rules/warn-about-rules.js';
import { warnAboutStoreReading } from './warn-about-store-reading.js';
import { reasonOverPolicies, warmEye } from '../rules/reason-over-policies.js';
import type { AttachedPolicies, WorkerJob, WorkerReply } from './worker-messages.js';

/** The worker's nice value: a load is background work, and serving requests comes first. */
const WORKER_NICE = 10;

/**
 * Lowers this thread's scheduling priority (Linux schedules threads one by one: the thread id
 * is read from /proc/thread-self). On two cores, a load at the priority of the thread that
 * serves requests takes a core from it, and from the store, for the seconds a load lasts.
 * Elsewhere, or when it is refused, the load runs at the process's priority.
 */
function lowerThreadPriority(): void {
  try {
    const thread = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(thread) && thread > 0) setPriority(thread, Math.max(getPriority(thread), WORKER_NICE));
  } catch {
    // Not Linux, or no /proc: the priority stays.
  }
}

const port = parentPort;
if (port !== null) {
  lowerThreadPriority();
  port.on('message', (job: WorkerJob) => {
    void run(job).then((reply) => {
      // The typed arrays move to the main thread rather than being copied.
      const { policies } = reply.ok ? reply : { policies: undefined };
      const arrays = policies === undefined ? [] : tableArrays(policies);
      port.postMessage(
        reply,
        arrays.map((array) => array.buffer as ArrayBuffer),
      );
      // Ready the module of the next load while the proxy has nothing for this thread to do;
      // only when this load needed EYE (operator rules): copy rules alone never do.
      if (reply.ok && reply.stats.eyeInputTriples > 0) warmEye();
    });
  });
}

/** The typed arrays of an attached table, moved to the main thread rather than copied. */
function tableArrays(policies: AttachedPolicies): readonly (Int32Array | Uint8Array | Uint16Array)[] {
  const { principals } = policies;
  return [
    policies.orders,
    policies.fileIndexes,
    policies.principalStarts,
    policies.principalIndexes,
    policies.graphStarts,
    policies.graphIndexes,
    principals.kinds,
    principals.units,
    principals.ends,
    principals.policyStarts,
    principals.policies,
    principals.slots,
  ];
}

async function run(job: WorkerJob): Promise<WorkerReply> {
  try {
    const started = performance.now();
    const fileTexts = new Map<string, string>();
    /** A file's text as the job gives it, else as `read` reads it; kept for the reply either way. */
    const textOf = (read: (file: string) => Promise<string>) => async (file: string) => {
      const text = job.fileTexts?.get(file) ?? (await read(file));
      fileTexts.set(file, text);
      return text;
    };
    const document = await readPolicyFiles(job.policyFiles, job.facts, textOf(readPolicyText));
    const readMs = performance.now() - started;
    const reasoning = await reasonOverPolicies(document.quads, job.ruleFiles, job.engine, textOf(readRuleFile));
    const attachStarted = performance.now();
    const attached = attachDerivations(document, reasoning.derived);
    const digest = digestOf(attached);
    // The same table as in force: not sent, so the main thread neither receives nor compiles it.
    const policies = digest === job.digestInForce ? undefined : attached;
    const counts = document.origins.slice(job.policyFiles.length).map((origin) => origin.count);
    return {
      id: job.id,
      ok: true,
      policies,
      digest,
      fileTexts,
      stats: {
        policyCount: attached.iris.length,
        eyeInputTriples: reasoning.inputTriples,
        readMs,
        eyeMs: reasoning.eyeMs,
        otherMs: reasoning.otherMs + performance.now() - attachStarted,
        ruleRuns: reasoning.files,
        stages: reasoning.stages,
        warnings: [
          ...warnAboutRules(document.quads, reasoning.readings, job.ruleFiles, new Set(shippedRuleFiles())),
          ...warnAboutStoreReading(attached),
        ],
        // The worker's heap as the load leaves it (the reasoner's store is still there to collect).
        workerHeapBytes: getHeapStatistics().total_heap_size,
        facts: job.facts.map((fact, at) => ({
          name: fact.name,
          triples: counts[at] ?? 0,
          bytes: fact.body.byteLength,
          fetchMs: fact.fetchMs,
        })),
      },
    };
  } catch (error) {
    if (error instanceof PolicyLoadError) {
      return {
        id: job.id,
        ok: false,
        message: error.message,
        ...(error.file && { file: error.file }),
        ...(error.policy && { policy: error.policy }),
      };
    }
    // Not ours (an EYE or n3 crash): still one line, still a refusal to load.
    const message = error instanceof Error ? error.message : String(error);
    return { id: job.id, ok: false, message: `policy load failed: ${message.split('\n')[0] ?? ''}` };
  }
}

/**
 * Every column of the table and where digestOf reads it: a column added to AttachedPolicies does
 * not compile until it is listed here, and so read. (The templates were once left out: a reload
 * that only removed a template was "unchanged", and the template kept granting.)
 */
const DIGESTED: Readonly<Record<keyof AttachedPolicies, 'text' | 'array'>> = {
  iris: 'text',
  files: 'text',
  graphs: 'text',
  hidePaths: 'text',
  graphTemplates: 'text',
  graphPrefixes: 'text',
  limits: 'text',
  restrictions: 'text',
  orders: 'array',
  fileIndexes: 'array',
  principalStarts: 'array',
  principalIndexes: 'array',
  graphStarts: 'array',
  graphIndexes: 'array',
  principals: 'array',
};
void DIGESTED;

/**
 * The digest of everything compilePolicySet reads: two loads with the same digest build the same
 * PolicySet, so a refresh that finds the one in force swaps nothing. Strings are written with
 * their length, so no two tables give the same byte stream.
 */
function digestOf(policies: AttachedPolicies): string {
  const hash = createHash('sha256');
  const text = (value: string) => {
    hash.update(`${value.length}:`);
    hash.update(value);
  };
  const texts = (values: readonly string[]) => {
    hash.update(`[${values.length}]`);
    for (const value of values) text(value);
  };
  texts(policies.iris);
  texts(policies.files);
  texts(policies.graphs);
  for (const paths of policies.hidePaths) texts(paths);
  // Templates grant graphs too: a reload that only edits or removes one is a change.
  for (const templates of policies.graphTemplates) texts(templates);
  for (const prefixes of policies.graphPrefixes) texts(prefixes);
  for (const limits of policies.limits) text(JSON.stringify(Object.entries(limits).sort()));
  for (const restriction of policies.restrictions) text(JSON.stringify(restriction));
  // Every array but the principals' hash slots, whose seed is drawn per load.
  const { slots } = policies.principals;
  for (const array of tableArrays(policies)) {
    if (array === slots) continue;
    hash.update(`[${array.length}]`);
    hash.update(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
  }
  return hash.digest('hex');
}
