// Policy reload with the real bin: SIGHUP, watched files replaced the way editors save, watched folders replaced, symlinked files, a broken file, a request in flight, start-up.

import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { explainAnonymous, listeningUrl, makeFolder, spawnGuard, type SpawnedGuard } from '../helpers/spawn-guard.js';

const FIXTURES = resolve('test/fixtures/reload');
const fixture = (name: string) => join(FIXTURES, name);
const G = 'http://example.org/graphs/';
const P = 'http://example.org/policies/';

/** Replaces `target` the way most editors save: write a temporary file beside it, then rename it over. */
function saveLikeAnEditor(target: string, text: string): void {
  const temporary = `${target}.swp-${process.pid}`;
  writeFileSync(temporary, text);
  renameSync(temporary, target);
}

describe('reload on SIGHUP', () => {
  let folder: ReturnType<typeof makeFolder>;
  let guard: SpawnedGuard;
  let url: string;
  let policyFile: string;
  before(async () => {
    folder = makeFolder();
    policyFile = join(folder.folder, 'policies.ttl');
    copyFileSync(fixture('policies-v1.ttl'), policyFile);
    guard = spawnGuard(folder.folder, { policies: [policyFile], explain: true });
    url = await listeningUrl(guard);
  });
  after(async () => {
    await guard.stop();
    folder.remove();
  });

  it('applies the new policies to later requests', async () => {
    assert.deepEqual((await explainAnonymous(url)).policies, [`<${P}everyone>`]);
    copyFileSync(fixture('policies-v2.ttl'), policyFile);
    const from = guard.lines.length;
    guard.child.kill('SIGHUP');
    const line = await guard.waitFor((entry) => entry.event === 'policies-reloaded', from);
    assert.equal(line.policies, 3);
    const explain = await explainAnonymous(url);
    assert.deepEqual(explain.policies, [`<${P}everyone>`, `<${P}everyone-b>`]);
    assert.match(explain.query, new RegExp(`FROM <${G}b>`));
  });

  it('keeps the previous set when the new files fail, and logs one line naming the file and the reason', async () => {
    const before = await explainAnonymous(url);
    copyFileSync(fixture('broken.ttl'), policyFile);
    const from = guard.lines.length;
    guard.child.kill('SIGHUP');
    const line = await guard.waitFor((entry) => entry.event === 'policies-reload-failed', from);
    assert.equal(line.file, policyFile);
    assert.match(String(line.error), new RegExp(`^${policyFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: Turtle syntax error`));
    assert.doesNotMatch(String(line.error), /\n/);
    assert.deepEqual(await explainAnonymous(url), before);
    const health = await fetch(`${url}/healthz`);
    assert.equal(health.status, 200);
  });

  it('survives a burst of signals and ends with the files read last', async () => {
    copyFileSync(fixture('policies-v1.ttl'), policyFile);
    const from = guard.lines.length;
    for (let i = 0; i < 5; i += 1) guard.child.kill('SIGHUP');
    await guard.waitFor((entry) => entry.event === 'policies-reloaded', from);
    // Merged: at most one more load after the one running when the burst arrived.
    await new Promise((done) => setTimeout(done, 1_500));
    const loads = guard.lines.slice(from).filter((entry) => entry.event === 'policies-reloaded').length;
    assert.ok(loads >= 1 && loads <= 2, `expected one or two loads for five signals, got ${loads}`);
    assert.deepEqual((await explainAnonymous(url)).policies, [`<${P}everyone>`]);
  });
});

describe('reload on file change (watchPolicies)', () => {
  let folder: ReturnType<typeof makeFolder>;
  let guard: SpawnedGuard;
  let url: string;
  let policyFile: string;
  let factsFile: string;
  before(async () => {
    folder = makeFolder();
    policyFile = join(folder.folder, 'policies.ttl');
    factsFile = join(folder.folder, 'groups.n3');
    copyFileSync(fixture('policies-v1.ttl'), policyFile);
    copyFileSync(fixture('no-facts.n3'), factsFile);
    guard = spawnGuard(folder.folder, {
      policies: [policyFile],
      rules: [resolve('rules/examples/group-hierarchy.n3'), factsFile],
      explain: true,
      watchPolicies: true,
      auth: { trustedHeaders: { agent: 'x-agent', groups: 'x-groups', agentPrefix: 'https://example.org/agents/' } },
    });
    url = await listeningUrl(guard);
  });
  after(async () => {
    await guard.stop();
    folder.remove();
  });

  it('reloads when a policy file is replaced by rename (editor save), without a signal', async () => {
    const from = guard.lines.length;
    saveLikeAnEditor(policyFile, readFileSync(fixture('policies-v2.ttl'), 'utf8'));
    await guard.waitFor((entry) => entry.event === 'policies-reloaded', from);
    assert.deepEqual((await explainAnonymous(url)).policies, [`<${P}everyone>`, `<${P}everyone-b>`]);
  });

  it('reloads when a file is written in place, once per burst of writes', async () => {
    const from = guard.lines.length;
    const text = readFileSync(fixture('policies-v1.ttl'), 'utf8');
    // An editor that truncates and writes in several steps: one reload, after the last step.
    writeFileSync(policyFile, '');
    writeFileSync(policyFile, text.slice(0, 100));
    writeFileSync(policyFile, text);
    await guard.waitFor((entry) => entry.event === 'policies-reloaded', from);
    await new Promise((done) => setTimeout(done, 800));
    assert.equal(guard.lines.slice(from).filter((entry) => entry.event === 'policies-reloaded').length, 1);
    assert.deepEqual((await explainAnonymous(url)).policies, [`<${P}everyone>`]);
  });

  it('reloads when an operator rule file changes', async () => {
    assert.deepEqual(await policiesOfGroup(url, 'interns'), [`<${P}everyone>`]);
    const from = guard.lines.length;
    saveLikeAnEditor(factsFile, readFileSync(fixture('interns-under-staff.n3'), 'utf8'));
    await guard.waitFor((entry) => entry.event === 'policies-reloaded', from);
    assert.deepEqual(await policiesOfGroup(url, 'interns'), [`<${P}everyone>`, `<${P}staff>`]);
  });

  it('keeps the previous set when a saved file is broken', async () => {
    const from = guard.lines.length;
    saveLikeAnEditor(policyFile, readFileSync(fixture('broken.ttl'), 'utf8'));
    const line = await guard.waitFor((entry) => entry.event === 'policies-reload-failed', from);
    assert.equal(line.file, policyFile);
    assert.deepEqual((await explainAnonymous(url)).policies, [`<${P}everyone>`]);
  });
});

describe('reload on file change when folders are replaced or files are symlinks (watchPolicies)', () => {
  let folder: ReturnType<typeof makeFolder>;
  let guard: SpawnedGuard;
  let url: string;
  let sub: string;
  let target: string;
  /** One policy file: everybody reads one graph, through the policy `name`. */
  const policyText = (name: string) =>
    `@prefix guard: <https://w3id.org/sparql-guard#> .\n<${P}${name}> a guard:Policy ; guard:agent guard:Everyone ; guard:readGraph <${G}${name}> .\n`;
  /** Waits for the next reload after line `from` (10 s at most: a watch that saw nothing fails fast), then the policies in force. */
  const reloaded = async (from: number) => {
    await guard.waitFor((entry) => entry.event === 'policies-reloaded', from, 10_000);
    return (await explainAnonymous(url)).policies;
  };
  before(async () => {
    folder = makeFolder();
    sub = join(folder.folder, 'sub');
    mkdirSync(sub);
    writeFileSync(join(sub, 'p.ttl'), policyText('sub-1'));
    // A policy file that is a symlink to a file in another folder.
    mkdirSync(join(folder.folder, 'other'));
    target = join(folder.folder, 'other', 'real.ttl');
    writeFileSync(target, policyText('link-1'));
    symlinkSync(target, join(folder.folder, 'link.ttl'));
    guard = spawnGuard(folder.folder, {
      policies: [join(sub, 'p.ttl'), join(folder.folder, 'link.ttl')],
      explain: true,
      watchPolicies: true,
    });
    url = await listeningUrl(guard);
  });
  after(async () => {
    await guard.stop();
    folder.remove();
  });

  it('follows a policy folder replaced by mv aside, mkdir, write, rm: that reloads, and so does the next edit', async () => {
    let from = guard.lines.length;
    renameSync(sub, `${sub}.old`);
    mkdirSync(sub);
    writeFileSync(join(sub, 'p.ttl'), policyText('sub-2'));
    rmSync(`${sub}.old`, { recursive: true });
    assert.ok((await reloaded(from)).includes(`<${P}sub-2>`));
    // The watch of the old folder died with it; the new folder is watched.
    await new Promise((done) => setTimeout(done, 500));
    from = guard.lines.length;
    writeFileSync(join(sub, 'p.ttl'), policyText('sub-3'));
    assert.ok((await reloaded(from)).includes(`<${P}sub-3>`));
    assert.equal(guard.lines.filter((entry) => entry.event === 'policies-watch-failed').length, 0);
  });

  it('reloads when the target of a symlinked policy file is edited in its own folder (sed -i writes a file there and renames it over)', async () => {
    const from = guard.lines.length;
    saveLikeAnEditor(target, policyText('link-2'));
    assert.ok((await reloaded(from)).includes(`<${P}link-2>`));
  });

  it('a policy folder removed: one policies-watch-failed line naming it and SIGHUP; watched again once it is back', async () => {
    const from = guard.lines.length;
    rmSync(sub, { recursive: true });
    const failed = await guard.waitFor((entry) => entry.event === 'policies-watch-failed', from, 10_000);
    assert.equal(failed.folder, sub);
    assert.match(String(failed.message), /SIGHUP still reloads/);
    // Still retrying after the line: the folder made again is watched, and its file read.
    await new Promise((done) => setTimeout(done, 600));
    const back = guard.lines.length;
    mkdirSync(sub);
    writeFileSync(join(sub, 'p.ttl'), policyText('sub-4'));
    await guard.waitFor((entry) => entry.event === 'policies-watch-resumed' && entry.folder === sub, back, 10_000);
    assert.ok((await reloaded(back)).includes(`<${P}sub-4>`));
    assert.equal(guard.lines.slice(from).filter((entry) => entry.event === 'policies-watch-failed').length, 1);
    const edited = guard.lines.length;
    writeFileSync(join(sub, 'p.ttl'), policyText('sub-5'));
    assert.ok((await reloaded(edited)).includes(`<${P}sub-5>`));
  });
});

/** The policies explain lists for an authenticated caller in `group` (trusted headers). */
async function policiesOfGroup(url: string, group: string): Promise<string[]> {
  return (await explainAnonymous(url, { 'x-agent': 'someone', 'x-groups': group })).policies;
}

describe('a request in flight during a reload', () => {
  let store: Server;
  let storeUrl: string;
  const held: { query: string; release: () => void }[] = [];
  before(async () => {
    // A store that honours the dataset check and holds every SELECT until the test releases it,
    // answering with the FROM graphs the guard sent: a way to stretch one request over a reload.
    store = createServer((request: IncomingMessage, response: ServerResponse) => {
      let body = '';
      request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        const query = new URLSearchParams(body).get('query') ?? '';
        const answer = (json: unknown) => {
          response.writeHead(200, { 'content-type': 'application/sparql-results+json' });
          response.end(JSON.stringify(json));
        };
        if (query.startsWith('ASK')) return answer({ head: {}, boolean: /WHERE \{\s*\}$/.test(query.trim()) });
        const graphs = [...query.matchAll(/FROM <([^>]+)>/g)].map((match) => match[1]);
        held.push({
          query,
          release: () => answer({ head: { vars: ['g'] }, results: { bindings: graphs.map((g) => ({ g: { type: 'uri', value: g } })) } }),
        });
      });
    });
    await new Promise<void>((done) => store.listen(0, '127.0.0.1', done));
    storeUrl = `http://127.0.0.1:${(store.address() as AddressInfo).port}/sparql`;
  });
  after(() => new Promise<void>((done) => store.close(() => done())));

  it('finishes under the set it started with; the next request uses the new set', async () => {
    const folder = makeFolder();
    const policyFile = join(folder.folder, 'policies.ttl');
    copyFileSync(fixture('policies-v1.ttl'), policyFile);
    const guard = spawnGuard(folder.folder, { policies: [policyFile], upstream: storeUrl });
    try {
      const url = await listeningUrl(guard);
      const select = (query: string) =>
        fetch(`${url}/sparql?query=${encodeURIComponent(query)}`, { headers: { accept: 'application/sparql-results+json' } });
      const first = select('SELECT ?g { ?s ?p ?o }');
      while (held.length < 1) await new Promise((done) => setTimeout(done, 10));

      copyFileSync(fixture('policies-v2.ttl'), policyFile);
      const from = guard.lines.length;
      guard.child.kill('SIGHUP');
      await guard.waitFor((entry) => entry.event === 'policies-reloaded', from);

      const second = select('SELECT ?g { ?s ?p ?o } LIMIT 1');
      while (held.length < 2) await new Promise((done) => setTimeout(done, 10));
      held[1]!.release();
      held[0]!.release();
      const graphsOf = async (response: Promise<Response>) => {
        const answer = await response;
        assert.equal(answer.status, 200);
        const json = (await answer.json()) as { results: { bindings: { g: { value: string } }[] } };
        return json.results.bindings.map((binding) => binding.g.value);
      };
      assert.deepEqual(await graphsOf(first), [`${G}a`]);
      assert.deepEqual(await graphsOf(second), [`${G}a`, `${G}b`]);
    } finally {
      await guard.stop();
      folder.remove();
    }
  });
});

describe('start-up', () => {
  it('a bad policy set stops the process with the one error line', async () => {
    const folder = makeFolder();
    try {
      const policyFile = join(folder.folder, 'policies.ttl');
      copyFileSync(fixture('broken.ttl'), policyFile);
      const guard = spawnGuard(folder.folder, { policies: [policyFile] });
      assert.equal(await guard.exited(), 1);
      const lines = guard.stderr().trimEnd().split('\n');
      assert.equal(lines.length, 1);
      assert.match(lines[0] ?? '', new RegExp(`^sparql-guard: ${policyFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: Turtle syntax error`));
    } finally {
      folder.remove();
    }
  });

  it('/healthz answers 503 until the first set is loaded, then 200', async () => {
    const folder = makeFolder();
    const port = await freePort();
    const policyFile = join(folder.folder, 'policies.ttl');
    // Enough policies that the first load takes a while after the listener is up.
    const lines = ['@prefix guard: <https://w3id.org/sparql-guard#> .'];
    for (let i = 0; i < 3000; i += 1)
      lines.push(`<http://example.org/p/${i}> a guard:Policy ; guard:agent guard:Everyone ; guard:readGraph <http://example.org/g/${i}> .`);
    writeFileSync(policyFile, `${lines.join('\n')}\n`);
    const guard = spawnGuard(folder.folder, { policies: [policyFile], port });
    try {
      const seen: number[] = [];
      while (!guard.lines.some((entry) => entry.event === 'listening')) {
        const status = await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (response) => response.status,
          () => 0,
        );
        if (status !== 0 && seen.at(-1) !== status) seen.push(status);
        if (guard.child.exitCode !== null) assert.fail(`the guard exited: ${guard.stderr()}`);
        await new Promise((done) => setTimeout(done, 5));
      }
      seen.push((await fetch(`http://127.0.0.1:${port}/healthz`)).status);
      assert.equal(seen[0], 503, `statuses seen: ${seen.join(', ')}`);
      assert.equal(seen.at(-1), 200);
    } finally {
      await guard.stop();
      folder.remove();
    }
  });
});

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createNetServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => done(port));
    });
  });
}
