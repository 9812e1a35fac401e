// Runs `sparql-guard serve` as a child process for a bench, following its JSON log lines and timing GETs of one query.

import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';

/** A running `serve`: its process, the log lines so far, and a wait for the next line of some events. */
export interface ServeProcess {
  readonly child: ChildProcess & { stdout: NonNullable<ChildProcess['stdout']> };
  /** Every JSON line printed on stdout so far. */
  readonly events: Record<string, unknown>[];
  /** The first line at or after index `from` whose event is one of `names`; rejects if the guard exits first. */
  next(names: readonly string[], from: number): Promise<Record<string, unknown>>;
}

/**
 * Starts `node <cli> serve` with GUARD_CONFIG set (and no GUARD_UPSTREAM or PORT from this
 * environment). BENCH_GUARD_NODE_ARGS adds Node options to the guard alone (for example
 * `--cpu-prof --cpu-prof-dir=/tmp/prof`, which NODE_OPTIONS does not take).
 */
export function spawnServe(cli: string, configFile: string): ServeProcess {
  const { GUARD_UPSTREAM: _u, PORT: _p, ...env } = process.env;
  const nodeArgs = process.env.BENCH_GUARD_NODE_ARGS?.split(' ').filter((arg) => arg !== '') ?? [];
  const child = spawn(process.execPath, [...nodeArgs, cli, 'serve'], {
    env: { ...env, GUARD_CONFIG: configFile },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const events: Record<string, unknown>[] = [];
  let waiters: (() => void)[] = [];
  let pending = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const part of parts) if (part.startsWith('{')) events.push(JSON.parse(part) as Record<string, unknown>);
    const ready = waiters;
    waiters = [];
    for (const waiter of ready) waiter();
  });
  const next = async (names: readonly string[], from: number): Promise<Record<string, unknown>> => {
    for (;;) {
      const found = events.slice(from).find((entry) => names.includes(String(entry.event)));
      if (found !== undefined) return found;
      if (child.exitCode !== null) throw new Error(`the guard exited: ${JSON.stringify(events.at(-1))}`);
      await new Promise<void>((done) => waiters.push(done));
    }
  };
  return { child, events, next };
}

/** One GET of `target` on `agent`, asking for SPARQL JSON results: its wall time, status and body. */
export function timedGet(target: string, agent: Agent): Promise<{ ms: number; status: number; body: string }> {
  return new Promise((done, fail) => {
    const started = performance.now();
    request(target, { agent, headers: { accept: 'application/sparql-results+json' } }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => done({ ms: performance.now() - started, status: response.statusCode ?? 0, body }));
    })
      .on('error', fail)
      .end();
  });
}
