// The policy worker of one guard: a long-lived thread that runs one load at a time, owned and closed by whoever created it (on the serving thread).

import { Worker } from 'node:worker_threads';
import { PolicyLoadError } from '../policy-load-error.js';
import type { WorkerJob, WorkerReply } from './worker-messages.js';
import { shippedRuleFiles } from '../rules/shipped-rule-files.js';

/** One policy worker thread and its queue of loads. */
export interface PolicyWorker {
  /** Runs `job` after the loads queued before it; rejects with a PolicyLoadError when the thread fails, hangs or was closed. */
  run(job: Omit<WorkerJob, 'id'>): Promise<WorkerReply>;
  /** Ends the thread (a load under way is rejected); the worker refuses further loads. */
  close(): Promise<void>;
}

/** A load that takes longer (an operator rule that never ends) is abandoned: the previous set stays. */
const LOAD_TIMEOUT_MS = 60_000;

/** What `createPolicyWorker` may be told. */
export interface PolicyWorkerOptions {
  /** How long one load may take before it is abandoned, milliseconds (LOAD_TIMEOUT_MS; tests shorten it). */
  readonly loadTimeoutMs?: number;
}

/**
 * A worker whose thread starts at its first load and is kept between loads, so EYE's module stays
 * warm; a thread that fails or hangs is ended and the next load starts a new one. It never keeps
 * the process alive between loads. Each guard creates its own and closes it when it closes: two
 * guards in one process never share a worker, nor a queue.
 */
export function createPolicyWorker(options: PolicyWorkerOptions = {}): PolicyWorker {
  const loadTimeoutMs = options.loadTimeoutMs ?? LOAD_TIMEOUT_MS;
  let thread: Worker | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  let nextId = 1;
  let closed = false;
  /** Rejects the load under way, if any, when the worker is closed. */
  let abandonRunning: ((error: Error) => void) | undefined;

  const runJob = (job: WorkerJob): Promise<WorkerReply> => {
    if (closed) return Promise.reject(new PolicyLoadError('the policy worker is closed'));
    const current = (thread ??= startThread());
    return new Promise<WorkerReply>((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        current.off('message', onMessage);
        current.off('error', onError);
        current.off('exit', onExit);
        current.unref();
        abandonRunning = undefined;
      };
      const abandon = (error: Error) => {
        settle();
        if (thread === current) thread = undefined;
        void current.terminate();
        reject(error);
      };
      const onMessage = (reply: WorkerReply) => {
        if (reply.id !== job.id) return;
        settle();
        resolve(reply);
      };
      const onError = (error: Error) =>
        abandon(new PolicyLoadError(`policy load failed in the worker: ${error.message.split('\n')[0] ?? ''}`));
      const onExit = (code: number) => abandon(new PolicyLoadError(`policy worker exited with code ${code}`));
      const timer = setTimeout(() => abandon(timedOut(job.ruleFiles, loadTimeoutMs)), loadTimeoutMs);
      abandonRunning = abandon;
      current.on('message', onMessage);
      current.on('error', onError);
      current.on('exit', onExit);
      // Keep the process alive while a load runs, not between loads.
      current.ref();
      current.postMessage(job);
    });
  };

  return {
    run(job) {
      const result = queue.then(() => runJob({ ...job, id: nextId++ }));
      queue = result.catch(() => undefined);
      return result;
    },
    async close() {
      closed = true;
      abandonRunning?.(new PolicyLoadError('the policy worker was closed during a load'));
      const last = thread;
      thread = undefined;
      await last?.terminate();
    },
  };
}

function startThread(): Worker {
  const thread = new Worker(new URL('./policy-worker.js', import.meta.url));
  thread.unref();
  return thread;
}

/**
 * The line of a load that took too long. The likely cause is an operator rule that never ends (the
 * shipped rules are copy rules, and the forward chainer always ends), so the line names the rule
 * files of config `rules` (also as its `file`) and how to find the one at fault.
 */
function timedOut(ruleFiles: readonly string[], loadTimeoutMs: number): PolicyLoadError {
  const shipped = new Set(shippedRuleFiles());
  const operators = ruleFiles.filter((file) => !shipped.has(file));
  const took = `policy load took longer than ${loadTimeoutMs} ms and was abandoned`;
  if (operators.length === 0) {
    return new PolicyLoadError(
      `${took}: no rule file is configured, so the policy files and fact sources are more than a load can read in time (split or shrink them)`,
    );
  }
  const files = operators.join(', ');
  return new PolicyLoadError(
    `${files}: ${took}: a rule of config rules that never ends is the likely cause (find it with sparql-guard check and the same configuration, leaving out one rule file at a time)`,
    files,
  );
}
