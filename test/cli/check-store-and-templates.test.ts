// The real bin's `check` contacts the configured store (a real one, one that is not there, one that ignores FROM) unless --offline, lists graph templates, and `--why` shows template graphs with their policy and the restrictions there.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

const BIN = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
const G = 'http://example.org/graphs/';
const P = 'http://example.org/policies/';
const HIDDEN = 'http://example.org/ns#label';
const POLICIES = `@prefix guard: <https://w3id.org/sparql-guard#> .
@prefix g: <${G}> .
@prefix p: <${P}> .
p:everyone a guard:Policy ; guard:agent guard:Everyone ; guard:readGraph g:a .
p:beta a guard:Policy ; guard:group "beta" ; guard:readGraph g:b ; guard:hidePath <${HIDDEN}> .
p:per-group a guard:Policy ; guard:group "beta" ; guard:readGraphTemplate "${G}teams/{group}" .
`;

/** Runs the bin without blocking this process (the store of the test answers from it). */
function run(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const { GUARD_CONFIG: _c, GUARD_UPSTREAM: _u, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env, timeout: 60_000, encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

describe('sparql-guard check and the store', () => {
  let folder: string;
  let store: TestGuard;
  /** A store that answers true to every ASK: it reads outside the dataset the guard names. */
  let union: Server;
  const config = (name: string, upstream: string | undefined, extra: Record<string, unknown> = {}): string => {
    const file = join(folder, name);
    writeFileSync(
      file,
      JSON.stringify({ ...(upstream !== undefined && { upstream }), policies: [join(folder, 'policies.ttl')], timeoutMs: 3000, ...extra }),
    );
    return file;
  };

  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'sparql-guard-check-store-'));
    writeFileSync(join(folder, 'policies.ttl'), POLICIES);
    store = await startTestGuard();
    union = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/sparql-results+json' });
        response.end('{"head":{},"boolean":true}');
      });
    });
    await new Promise<void>((resolve) => union.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await store?.close();
    union?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('says a real store answers and honours dataset clauses (text and JSON), without its query string', async () => {
    const upstream = `${store.guard.upstreamUrl}?token=never-printed`;
    const text = await run(['check', '--config', config('real.json', upstream)]);
    assert.equal(text.status, 0, text.stderr);
    const url = store.guard.upstreamUrl.replace(/\?.*$/, '');
    assert.ok(text.stdout.includes(`store: ${url} answers and honours dataset clauses (FROM, FROM NAMED)\n`), text.stdout);
    const json = await run(['check', '--json', '--config', config('real.json', upstream)]);
    assert.equal(json.status, 0, json.stderr);
    assert.deepEqual((JSON.parse(json.stdout) as { store: unknown }).store, {
      url,
      contacted: true,
      datasetClauses: 'honoured',
      datasetForm: 'clauses',
    });
    assert.ok(!text.stdout.includes('graph filters'), text.stdout);
    assert.ok(!text.stdout.includes('never-printed') && !json.stdout.includes('never-printed'));
  });

  it('fails for a store that is not there (refused, or a name that does not resolve), unless --offline', async () => {
    for (const upstream of ['http://127.0.0.1:1/query', 'http://store.invalid/query']) {
      const file = config('absent.json', upstream);
      const result = await run(['check', '--config', file]);
      assert.equal(result.status, 1, `${upstream}: ${result.stdout}`);
      assert.equal(result.stdout, '');
      assert.match(
        result.stderr,
        new RegExp(
          `^sparql-guard check: store ${upstream.replace(/[./]/g, '\\$&')} does not answer the dataset check: .+ \\(.+--offline skips this check\\)\\n$`,
        ),
      );
      const offline = await run(['check', '--offline', '--config', file]);
      assert.equal(offline.status, 0, offline.stderr);
      assert.ok(offline.stdout.includes(`store: ${upstream} not contacted (--offline)\n`), offline.stdout);
    }
  });

  it('fails for a store that ignores dataset clauses, as serve refuses it', async () => {
    const upstream = `http://127.0.0.1:${(union.address() as AddressInfo).port}/query`;
    const result = await run(['check', '--config', config('union.json', upstream)]);
    assert.equal(result.status, 1);
    assert.match(
      result.stderr,
      /^sparql-guard check: store http:\/\/127\.0\.0\.1:\d+\/query: the upstream store ignores FROM \/ FROM NAMED .*\n$/,
    );
  });

  it('lists the templates of template policies, in text and JSON', async () => {
    const file = config('templates.json', undefined);
    const text = await run(['check', '--config', file]);
    assert.equal(text.status, 0, text.stderr);
    assert.ok(text.stdout.includes('store: the embedded store (no upstream configured)\n'));
    assert.ok(
      text.stdout.includes(`group "beta"\n  policies: <${P}beta> <${P}per-group>\n  graphs:   <${G}b>\n  templates: "${G}teams/{group}"\n`),
      text.stdout,
    );
    const json = JSON.parse((await run(['check', '--json', '--config', file])).stdout) as {
      principals: { principal: string; graphs: string[]; templates?: string[] }[];
    };
    const beta = json.principals.find((entry) => entry.principal === 'group "beta"');
    assert.deepEqual(beta?.templates, [`${G}teams/{group}`]);
    assert.equal(json.principals.find((entry) => entry.principal === 'Everyone')?.templates, undefined);
  });

  it('--why names the policy and template behind a template graph, and the restrictions of each graph', async () => {
    const file = config('templates.json', undefined);
    const args = ['check', '--config', file, '--why', 'http://example.org/agents/bea', '--group', 'beta'];
    const text = await run(args);
    assert.equal(text.status, 0, text.stderr);
    const block = (graph: string) => text.stdout.split('\ngraph ').find((part) => part.startsWith(`<${graph}>`)) ?? '';
    const team = block(`${G}teams/beta`);
    assert.match(team, /^ {2}restrictions: none$/m);
    assert.match(team, new RegExp(`^ {2}policy <${P}per-group> \\(`, 'm'));
    assert.ok(team.includes(`<${G}teams/beta> from guard:readGraphTemplate "${G}teams/{group}", filled in for this caller`), team);
    assert.match(block(`${G}b`), new RegExp(`^ {2}restrictions: hidePath <${HIDDEN.replace(/[.#/]/g, '\\$&')}>$`, 'm'));

    const json = JSON.parse((await run([...args.slice(0, 1), '--json', ...args.slice(1)])).stdout) as {
      graphs: { graph: string; policies: { policy: string; grants: { template?: string } }[]; restrictions: unknown[] }[];
    };
    const teamJson = json.graphs.find((entry) => entry.graph === `${G}teams/beta`);
    assert.deepEqual(
      teamJson?.policies.map((policy) => [policy.policy, policy.grants.template]),
      [[`${P}per-group`, `${G}teams/{group}`]],
    );
    assert.deepEqual(json.graphs.find((entry) => entry.graph === `${G}b`)?.restrictions, [{ kind: 'hidePath', predicates: [HIDDEN] }]);
  });
});
