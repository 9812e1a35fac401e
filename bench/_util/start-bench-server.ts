// Starts the processes a benchmark measures: the stand-in store, the plain proxy and sparql-guard itself, each in its own process.

import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** A process serving HTTP on 127.0.0.1. */
export interface BenchServer {
  readonly url: string;
  readonly pid: number;
  /** A guard's audit file (when started with `audit`). */
  readonly auditFile?: string;
  stop(): Promise<void>;
}

/** The API key the benchmark caller presents; its policy grants ten graphs. */
export const BENCH_KEY = 'sg_bench_caller_5d1c0e7a9b2f4386';

const CLI = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
const START_TIMEOUT_MS = 60_000;

/** Runs `bench/<name>.js` with `args`; it prints `{"port":n}` once it listens. */
export async function startBenchServer(name: string, args: readonly string[] = []): Promise<BenchServer> {
  const script = fileURLToPath(new URL(`./${name}.js`, import.meta.url));
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const port = await withTimeout(
    new Promise<number>((resolve, reject) => {
      lines.once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
      child.once('exit', (code) => reject(new Error(`${name} exited with code ${code} before listening`)));
    }),
    `${name} did not start`,
  );
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => stopChild(child) };
}

/**
 * Starts `sparql-guard serve` (the real CLI) in front of `upstream` with `workers` processes:
 * a configuration file with one policy granting ten graphs to the bench caller, request log
 * lines written to a file (as a log collector would take them), and waits for the line
 * that says every worker listens with its policies loaded.
 */
export async function startBenchGuard(
  upstream: string,
  workers: number,
  options: {
    metrics?: boolean;
    /** Policies (Turtle) and API keys instead of the bench caller's ten graphs. */
    policies?: string;
    apiKeys?: readonly { agent: string; groups: readonly string[]; sha256: string }[];
    /** Serve `{path}/explain`. */
    explain?: boolean;
    /** Config `audit`, its `file` relative to the bench folder (`audit.jsonl`), read back with `auditFile`. */
    audit?: Record<string, unknown>;
    /** Config `rowChecks` (absent: the default, join). */
    rowChecks?: 'join' | 'exists';
  } = {},
): Promise<BenchServer> {
  const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-bench-'));
  const graphs = Array.from({ length: 10 }, (_, i) => `<https://bench.example.org/graphs/g${i}>`).join(', ');
  writeFileSync(
    join(folder, 'policies.ttl'),
    options.policies ??
      `@prefix guard: <https://w3id.org/sparql-guard#> .\n<https://bench.example.org/policies/bench> a guard:Policy ; guard:group "bench" ; guard:readGraph ${graphs} .\n`,
  );
  const port = await freePort();
  writeFileSync(
    join(folder, 'guard.json'),
    JSON.stringify({
      upstream,
      policies: ['policies.ttl'],
      auth: {
        apiKeys: options.apiKeys ?? [
          {
            agent: 'https://bench.example.org/agents/caller',
            groups: ['bench'],
            sha256: createHash('sha256').update(BENCH_KEY).digest('hex'),
          },
        ],
      },
      ...(options.explain === true && { explain: true }),
      ...(options.rowChecks !== undefined && { rowChecks: options.rowChecks }),
      ...(options.audit !== undefined && { audit: { file: 'audit.jsonl', ...options.audit } }),
      host: '127.0.0.1',
      port,
      workers,
      // Prometheus metrics recorded for every request (the listener on a free port, not scraped while timed).
      ...(options.metrics === true && { metrics: { port: 0, host: '127.0.0.1' } }),
    }),
  );
  const logFile = join(folder, 'guard.log');
  const out = openSync(logFile, 'w');
  // BENCH_GUARD_NODE_ARGS adds Node options to the guard alone (as in spawn-serve.ts), e.g. `--cpu-prof`.
  const nodeArgs = process.env.BENCH_GUARD_NODE_ARGS?.split(' ').filter((arg) => arg !== '') ?? [];
  const child = spawn(process.execPath, [...nodeArgs, CLI, 'serve'], {
    env: { PATH: process.env.PATH, GUARD_CONFIG: join(folder, 'guard.json') },
    stdio: ['ignore', out, 'inherit'],
  });
  closeSync(out);
  let exited = false;
  child.once('exit', () => (exited = true));
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!listening(readFileSync(logFile, 'utf8'))) {
    if (exited || Date.now() > deadline) {
      await stopChild(child);
      rmSync(folder, { recursive: true, force: true });
      throw new Error('sparql-guard did not start');
    }
    await new Promise((resume) => setTimeout(resume, 50));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    auditFile: join(folder, 'audit.jsonl'),
    async stop() {
      await stopChild(child);
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** The primary's (or the single process's) `listening` line: it has no `worker` field. */
function listening(log: string): boolean {
  return log.split('\n').some((line) => line.includes('"event":"listening"') && !line.includes('"worker"'));
}

/** SIGTERM, then SIGKILL if the process has not gone within 10 s. */
export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** A port free on 127.0.0.1 right now (the guard is told its port, as an operator would). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

function withTimeout<T>(promise: Promise<T>, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(message)), START_TIMEOUT_MS);
    }),
  ]);
}
