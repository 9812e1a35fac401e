// Runs the real `sparql-guard serve` bin as a child process and follows its JSON log lines.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The compiled bin next to the compiled tests (dist/ or a private build folder). */
export const BIN = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
export const INTEGRATION_DATA = resolve('test/fixtures/integration/data.trig');

export type LogEntry = Record<string, unknown>;

export interface SpawnedGuard {
  readonly child: ChildProcess;
  /** Every JSON line printed on stdout so far. */
  readonly lines: LogEntry[];
  /** Everything printed on stderr so far. */
  stderr(): string;
  /** Resolves with the first line (after `from`) that `match` accepts; rejects after `timeoutMs`. */
  waitFor(match: (line: LogEntry) => boolean, from?: number, timeoutMs?: number): Promise<LogEntry>;
  /** Resolves with the exit code. */
  exited(): Promise<number | null>;
  stop(): Promise<void>;
}

/** A temporary folder for a config and its policy files; `remove` deletes it. */
export function makeFolder(): { folder: string; remove(): void } {
  const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-reload-'));
  return { folder, remove: () => rmSync(folder, { recursive: true, force: true }) };
}

/** Writes `config` (over loopback, port 0, the integration data) as guard.json in `folder` and starts the bin on it. */
export function spawnGuard(folder: string, config: Record<string, unknown>): SpawnedGuard {
  const configFile = join(folder, 'guard.json');
  writeFileSync(
    configFile,
    JSON.stringify({ port: 0, host: '127.0.0.1', embedded: { data: [INTEGRATION_DATA] }, shutdown: { drainMs: 0 }, ...config }),
  );
  const { GUARD_UPSTREAM: _ignored, PORT: _port, ...env } = process.env;
  const child = spawn(process.execPath, [BIN, 'serve'], { env: { ...env, GUARD_CONFIG: configFile }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: LogEntry[] = [];
  const listeners = new Set<() => void>();
  let errors = '';
  let pending = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const part of parts) if (part.trim() !== '') lines.push(JSON.parse(part) as LogEntry);
    for (const listener of listeners) listener();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (errors += chunk));
  const exit = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));

  return {
    child,
    lines,
    stderr: () => errors,
    waitFor(match, from = 0, timeoutMs = 20_000) {
      return new Promise((done, fail) => {
        const check = () => {
          const found = lines.slice(from).find(match);
          if (found === undefined) return;
          cleanup();
          done(found);
        };
        const timer = setTimeout(() => {
          cleanup();
          fail(new Error(`no matching log line within ${timeoutMs} ms; stderr: ${errors}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
          void exit.then(() => undefined);
        };
        listeners.add(check);
        void exit.then(() => {
          if (listeners.has(check)) {
            cleanup();
            fail(new Error(`the guard exited; stderr: ${errors}`));
          }
        });
        check();
      });
    },
    exited: () => exit,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exit;
    },
  };
}

/** The base URL from the guard's own `listening` line (with workers: once all of them listen). */
export async function listeningUrl(guard: SpawnedGuard): Promise<string> {
  // The guard's own line: with workers, the primary's comes once every worker listens (a worker's carries `worker`).
  const line = await guard.waitFor((entry) => entry.event === 'listening' && entry.worker === undefined);
  return String(line.url);
}

/** Anonymous explain of a fixed query: the policies and graphs the set in force grants. */
export async function explainAnonymous(url: string, headers: Record<string, string> = {}): Promise<{ policies: string[]; query: string }> {
  const response = await fetch(`${url}/sparql/explain?query=${encodeURIComponent('SELECT * { ?s ?p ?o }')}`, { headers });
  if (response.status !== 200) throw new Error(`explain answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as { policies: string[]; query: string };
}
