// Workers sharing the port: one embedded store for all, every worker serves, SIGHUP and SIGTERM reach them all, a dead worker is replaced.

import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { INTEGRATION_API_KEYS, INTEGRATION_DATA, INTEGRATION_POLICIES } from '../helpers/start-test-guard.js';

const BIN = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
const LABELS = 'PREFIX ex: <http://example.org/ns#>\nSELECT ?label WHERE { ?s ex:label ?label }';
type Line = Record<string, unknown>;

/** The real bin, `serve`, with its JSON log lines collected as they come. */
interface ServeProcess {
  readonly child: ChildProcess;
  readonly lines: Line[];
  readonly stderr: () => string;
  waitFor(test: (line: Line) => boolean, count?: number): Promise<Line[]>;
  readonly exited: Promise<number | null>;
}

function serve(configFile: string, workers: number): ServeProcess {
  const { GUARD_CONFIG: _c, GUARD_UPSTREAM: _u, GUARD_WORKERS: _w, PORT: _p, ...env } = process.env;
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...env, GUARD_CONFIG: configFile, GUARD_WORKERS: String(workers) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Line[] = [];
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout! }).on('line', (text) => {
    lines.push(JSON.parse(text) as Line);
    for (const wake of waiters) wake();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    lines,
    stderr: () => stderr,
    exited,
    waitFor: (test, count = 1) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = lines.filter(test);
          if (found.length >= count) {
            waiters.delete(check);
            resolve(found);
          }
        };
        waiters.add(check);
        void exited.then((code) => reject(new Error(`serve exited with code ${code} first: ${stderr}`)));
        check();
      }),
  };
}

/** Labels an anonymous caller sees, asked over a fresh connection (so the cluster may hand it to any worker). */
function labels(endpoint: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      endpoint,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/sparql-query', accept: 'application/sparql-results+json' } },
      (answer) => {
        let body = '';
        answer.setEncoding('utf8');
        answer.on('data', (text: string) => (body += text));
        answer.on('end', () => {
          if (answer.statusCode !== 200) return reject(new Error(`status ${answer.statusCode}`));
          const json = JSON.parse(body) as { results: { bindings: { label: { value: string } }[] } };
          resolve(json.results.bindings.map((binding) => binding.label.value).sort());
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(LABELS);
  });
}

/** Process ids of the direct children of `pid` (the workers of a primary). */
function childrenOf(pid: number): number[] {
  let listing = '';
  try {
    listing = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
  } catch {
    // ps exits 1 when no process matches.
  }
  return listing
    .split('\n')
    .map((text) => Number(text.trim()))
    .filter((child) => child > 0);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const ALPHA = ['alpha one', 'alpha three', 'alpha two'];
const ALPHA_AND_BETA = [...ALPHA, 'beta one', 'beta two'];

let folder: string;
before(() => {
  folder = mkdtempSync(join(tmpdir(), 'sparql-guard-cluster-'));
});
after(() => rmSync(folder, { recursive: true, force: true }));

function writeConfig(name: string, policiesFile: string): string {
  const file = join(folder, name);
  writeFileSync(
    file,
    JSON.stringify({
      policies: [policiesFile],
      auth: { apiKeys: INTEGRATION_API_KEYS },
      embedded: { data: [INTEGRATION_DATA] },
      host: '127.0.0.1',
      port: 0,
    }),
  );
  return file;
}

describe('sparql-guard serve with workers: 2', () => {
  it(
    'serves from both workers over one embedded store; SIGHUP reloads both; SIGTERM stops all and exits 0',
    { timeout: 120_000 },
    async () => {
      const policies = join(folder, 'policies.ttl');
      writeFileSync(policies, readFileSync(INTEGRATION_POLICIES));
      const guard = serve(writeConfig('guard.json', policies), 2);
      try {
        const [primaryListening] = await guard.waitFor((line) => line.event === 'listening' && line.worker === undefined);
        assert.equal(primaryListening!.workers, 2);
        const endpoint = `${String(primaryListening!.url)}/sparql`;
        const workerIds = (await guard.waitFor((line) => line.event === 'listening' && line.worker !== undefined, 2)).map(
          (line) => line.worker,
        );
        assert.equal(new Set(workerIds).size, 2, 'two distinct workers listen');
        assert.equal(guard.lines.filter((line) => line.event === 'embedded-store-started').length, 1, 'one store, started by the primary');
        assert.ok(guard.lines.every((line) => line.event !== 'embedded-store-started' || line.worker === undefined));
        const workerPids = childrenOf(guard.child.pid!);
        assert.equal(workerPids.length, 2);

        // Every worker answers, and answers the same from the shared store.
        for (let i = 0; i < 8; i += 1) assert.deepEqual(await labels(endpoint), ALPHA);
        const served = await guard.waitFor((line) => line.method === 'POST', 8);
        assert.deepEqual(new Set(served.map((line) => line.worker)), new Set(workerIds), 'requests reached both workers');

        // SIGHUP to the primary reloads the policies of every worker.
        writeFileSync(policies, `${readFileSync(INTEGRATION_POLICIES, 'utf8')}\np:everyone guard:readGraph g:b .\n`);
        guard.child.kill('SIGHUP');
        const reloaded = await guard.waitFor((line) => line.event === 'policies-reloaded', 2);
        assert.deepEqual(new Set(reloaded.map((line) => line.worker)), new Set(workerIds));
        for (let i = 0; i < 6; i += 1) assert.deepEqual(await labels(endpoint), ALPHA_AND_BETA);

        // SIGTERM to the primary stops every worker, then the primary exits 0.
        guard.child.kill('SIGTERM');
        assert.equal(await guard.exited, 0);
        const stopped = guard.lines.filter((line) => line.event === 'shutdown' && line.worker !== undefined).map((line) => line.worker);
        assert.deepEqual(new Set(stopped), new Set(workerIds));
        for (const pid of workerPids) assert.equal(alive(pid), false, `worker ${pid} has exited`);
        await assert.rejects(labels(endpoint), (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED');
      } finally {
        guard.child.kill('SIGKILL');
      }
    },
  );

  it('replaces a worker that dies', { timeout: 120_000 }, async () => {
    const guard = serve(writeConfig('replace.json', INTEGRATION_POLICIES), 2);
    try {
      const [listening] = await guard.waitFor((line) => line.event === 'listening' && line.worker === undefined);
      const [victim] = childrenOf(guard.child.pid!);
      process.kill(victim!, 'SIGKILL');
      await guard.waitFor((line) => line.event === 'worker-exited' && line.signal === 'SIGKILL');
      await guard.waitFor((line) => line.event === 'listening' && line.worker === 3);
      assert.equal(childrenOf(guard.child.pid!).length, 2);
      for (let i = 0; i < 4; i += 1) assert.deepEqual(await labels(`${String(listening!.url)}/sparql`), ALPHA);
      guard.child.kill('SIGTERM');
      assert.equal(await guard.exited, 0);
    } finally {
      guard.child.kill('SIGKILL');
    }
  });

  it('exits 1 with the reason when the workers cannot load the policies', { timeout: 120_000 }, async () => {
    const broken = join(folder, 'broken.ttl');
    writeFileSync(
      broken,
      '@prefix guard: <https://w3id.org/sparql-guard#> .\n<http://example.org/p> a guard:Policy ; guard:readGraph "not an IRI" .\n',
    );
    const guard = serve(writeConfig('broken.json', broken), 2);
    assert.equal(await guard.exited, 1);
    assert.match(guard.stderr(), /broken\.ttl/);
    assert.equal(
      guard.lines.some((line) => line.event === 'listening'),
      false,
    );
  });
});
