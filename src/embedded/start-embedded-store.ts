// Starts the embedded Oxigraph store in its own worker thread and keeps it alive while the guard runs.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { packageRoot } from '../package-root.js';
import type { StoreWorkerReport, WorkerCommand, WorkerInput } from './embedded-store-worker.js';
import { firstLine } from './first-line.js';

/** A running embedded store: its SPARQL query endpoint on loopback, and how to stop it. */
export interface EmbeddedStore {
  /** `http://127.0.0.1:<port>/query`; stays the same when a dead worker is replaced. */
  queryUrl: string;
  /** Closes the endpoint and ends the worker; safe to call twice. */
  stop(): Promise<void>;
}

/** Options of {@link startEmbeddedStore}. */
export interface EmbeddedStoreOptions {
  /** Files loaded in order, format by extension: .trig, .nq, .ttl, .nt. */
  dataFiles: readonly string[];
  /** Receives lifecycle lines (worker died, restarted); default: one JSON line on stdout. */
  log?: (level: 'info' | 'error', message: string) => void;
  /**
   * Called when a dead worker cannot be replaced; default: log and exit the process with
   * status 1, since the guard would otherwise answer 502 forever.
   */
  onFatal?: (error: Error) => void;
  /**
   * The longest one evaluation may run (the guard passes its `timeoutMs`, after which it has
   * answered 504 or 502 already). Oxigraph cannot stop a query, so a worker past it is
   * terminated and replaced: otherwise every later query would wait behind it. Default: none.
   */
  queryTimeoutMs?: number;
}

/** A worker that has loaded its data and is listening. */
interface LiveWorker {
  readonly worker: Worker;
  readonly port: number;
}

const WORKER_URL = new URL('./embedded-store-worker.js', import.meta.url);

/** Past the query time limit, how long a worker may still finish before it is replaced. */
const OVERRUN_GRACE_MS = 1000;

/** How long stop() waits for a worker busy with a long query before terminating it. */
const STOP_GRACE_MS = 2000;

/**
 * Loads `dataFiles` into Oxigraph inside a worker thread and serves them on an ephemeral
 * loopback port. Oxigraph evaluates queries synchronously; in its own thread a slow query
 * never blocks the proxy's event loop. Rejects with one line naming the file when a file
 * cannot be loaded.
 */
export async function startEmbeddedStore(options: EmbeddedStoreOptions): Promise<EmbeddedStore> {
  const log = options.log ?? logLine;
  const onFatal =
    options.onFatal ??
    ((error: Error): void => {
      log('error', `embedded store cannot be restarted: ${error.message}`);
      process.exit(1);
    });
  const dataFiles = [...options.dataFiles];

  let current = await spawn(dataFiles, 0);
  const port = current.port;
  let stopping = false;

  // A worker exits unexpectedly only after a WASM trap (or a bug): replace it on the same port,
  // so the URL the guard was given stays valid. Requests in flight meanwhile get a refused or
  // reset connection, which the guard answers with 502.
  function watch(live: LiveWorker): void {
    // Without a listener an uncaught error in the worker would be rethrown in this thread.
    live.worker.on('error', (error) => log('error', `embedded store worker failed: ${firstLine(error)}`));
    let evaluation: NodeJS.Timeout | undefined;
    live.worker.on('message', (report: StoreWorkerReport) => {
      if (report.kind === 'crashed') log('error', `embedded store worker failed: ${report.message}`);
      if (report.kind === 'idle') clearTimeout(evaluation);
      if (report.kind === 'busy' && options.queryTimeoutMs !== undefined) {
        clearTimeout(evaluation);
        evaluation = setTimeout(() => {
          log('error', `embedded store worker spent over ${options.queryTimeoutMs} ms on one query; replacing it`);
          void live.worker.terminate();
        }, options.queryTimeoutMs + OVERRUN_GRACE_MS);
        evaluation.unref();
      }
    });
    live.worker.once('exit', (code) => {
      clearTimeout(evaluation);
      if (stopping) return;
      log('error', `embedded store worker exited with code ${code}; restarting it`);
      spawn(dataFiles, port).then(
        (next) => {
          if (stopping) {
            void stopWorker(next.worker);
            return;
          }
          current = next;
          watch(next);
          log('info', `embedded store restarted on 127.0.0.1:${port}`);
        },
        (error: Error) => {
          if (!stopping) onFatal(error);
        },
      );
    });
  }
  watch(current);

  let stopped: Promise<void> | undefined;
  return {
    queryUrl: `http://127.0.0.1:${port}/query`,
    stop() {
      stopping = true;
      stopped ??= stopWorker(current.worker);
      return stopped;
    },
  };
}

/** Absolute path of the demo data (policies/demo.trig at the package root). */
export function demoDataFile(): string {
  const file = join(packageRoot(), 'policies', 'demo.trig');
  if (!existsSync(file)) throw new Error('policies/demo.trig not found at the package root of the installed sparql-guard');
  return file;
}

/** Starts one worker and waits until it listens, or rejects with its one-line reason. */
function spawn(dataFiles: readonly string[], port: number): Promise<LiveWorker> {
  const input: WorkerInput = { dataFiles, port };
  const worker = new Worker(WORKER_URL, { workerData: input });
  return new Promise((resolve, reject) => {
    const onMessage = (report: StoreWorkerReport): void => {
      settle();
      if (report.kind === 'ready') resolve({ worker, port: report.port });
      else reject(new Error('message' in report ? report.message : `embedded store reported ${report.kind} while starting`));
    };
    const onError = (error: Error): void => {
      settle();
      reject(new Error(`embedded store failed to start: ${error.message}`));
    };
    const onExit = (code: number): void => {
      settle();
      reject(new Error(`embedded store exited with code ${code} while starting`));
    };
    function settle(): void {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    }
    worker.once('message', onMessage);
    worker.once('error', onError);
    worker.once('exit', onExit);
  });
}

/** Asks the worker to close its server; terminates it if it is stuck in a long query. */
function stopWorker(worker: Worker): Promise<void> {
  return new Promise((resolve) => {
    if (worker.threadId === -1) return resolve(); // already exited
    const grace = setTimeout(() => void worker.terminate(), STOP_GRACE_MS);
    worker.once('exit', () => {
      clearTimeout(grace);
      resolve();
    });
    worker.postMessage({ kind: 'stop' } satisfies WorkerCommand);
  });
}

function logLine(level: 'info' | 'error', message: string): void {
  process.stdout.write(`${JSON.stringify({ level, msg: message, time: new Date().toISOString() })}\n`);
}
