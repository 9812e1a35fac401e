// Three guard replicas behind a real HAProxy on loopback act as one service: a shared policy change reaches all, so does a membership written into the store (and its removal), a rolling SIGTERM restart fails no request.

import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startWritableStore, type WritableStore } from '../helpers/start-writable-store.js';
import { makeFolder, spawnGuard, type SpawnedGuard } from '../helpers/spawn-guard.js';

const REPLICAS = 3;
/** How long a replica keeps serving after SIGTERM with /readyz at 503: several HAProxy check intervals (fall 2). */
const DRAIN_MS = 1500;
const CHECK_INTERVAL_MS = 200;
const CLIENTS = 4;
/** Counts the graphs the anonymous caller may read: 1 under the first policy set, 2 under the second. */
const QUERY = 'SELECT (COUNT(DISTINCT ?g) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }';
const POLICIES_V1 = `@prefix guard: <https://w3id.org/sparql-guard#> .
<http://example.org/policies/a> a guard:Policy ; guard:agent guard:Everyone ; guard:readGraph <http://example.org/graphs/a> .
<http://example.org/policies/project-c> a guard:Policy ; guard:group "project-c" ;
    <https://example.org/projects#forProject> <http://example.org/projects/c> .
`;
/** Memberships and project graphs as the application keeps them in the store (rules/examples/project-membership.n3 reads them). */
const APP_GRAPH = 'http://example.org/app/projects';
const MEMBERS_QUERY = `PREFIX app: <https://example.org/app#> PREFIX proj: <https://example.org/projects#>
CONSTRUCT { ?agent proj:memberOf ?project. ?graph proj:belongsTo ?project }
WHERE { GRAPH <${APP_GRAPH}> { { ?agent app:memberOf ?project } UNION { ?graph app:partOf ?project } } }`;
/** How often each replica reads the memberships. */
const REFRESH_MS = 1000;
const DAVE = '<http://example.org/agents/dave> <https://example.org/app#memberOf> <http://example.org/projects/c> .';
const POLICIES_V2 = `${POLICIES_V1}<http://example.org/policies/b> a guard:Policy ; guard:agent guard:Everyone ; guard:readGraph <http://example.org/graphs/b> .
`;
const DATA = `<http://example.org/graphs/a> { <http://example.org/s/a> <http://example.org/p> "a" . }
<http://example.org/graphs/b> { <http://example.org/s/b> <http://example.org/p> "b" . }
<http://example.org/graphs/c> { <http://example.org/s/c> <http://example.org/p> "c" . }
<${APP_GRAPH}> { <http://example.org/graphs/c> <https://example.org/app#partOf> <http://example.org/projects/c> . }
`;

/** Debian installs HAProxy into /usr/sbin, which a user's PATH may leave out. */
const HAPROXY = ['haproxy', '/usr/sbin/haproxy'].find((command) => spawnSync(command, ['-v']).status === 0);
const skip = HAPROXY === undefined ? 'haproxy is not installed (.ci/run installs it)' : false;

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** The number of graphs `url` lets the anonymous caller read, or the failure as text. */
async function graphCount(url: string): Promise<number | string> {
  try {
    const response = await fetch(`${url}/sparql?query=${encodeURIComponent(QUERY)}`, { signal: AbortSignal.timeout(10_000) });
    const body = await response.text();
    if (response.status !== 200) return `status ${response.status}: ${body.trim()}`;
    const value = (JSON.parse(body) as { results: { bindings: { n: { value: string } }[] } }).results.bindings[0]?.n.value;
    return Number(value);
  } catch (error) {
    return `network: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`;
  }
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

describe('three replicas behind HAProxy', { skip, timeout: 150_000 }, () => {
  let shared: ReturnType<typeof makeFolder>;
  let policyFile: string;
  const ports: number[] = [];
  const replicas: SpawnedGuard[] = [];
  let store: WritableStore;
  let haproxy: ChildProcess;
  let haproxyErrors = '';
  let lbUrl: string;

  /** Starts replica `index` on its fixed port from its own config folder, sharing the policy file and the store. */
  const startReplica = async (index: number): Promise<SpawnedGuard> => {
    const folder = join(shared.folder, `replica-${index}`);
    mkdirSync(folder, { recursive: true });
    const replica = spawnGuard(folder, {
      upstream: store.queryUrl,
      policies: [policyFile],
      rules: [resolve('rules/examples/project-membership.n3')],
      facts: [{ name: 'members', query: MEMBERS_QUERY, refreshMs: REFRESH_MS }],
      auth: { trustedHeaders: { agent: 'x-remote-user', agentPrefix: 'http://example.org/agents/' } },
      watchPolicies: true,
      port: ports[index],
      shutdown: { drainMs: DRAIN_MS, graceMs: 5000 },
    });
    await replica.waitFor((line) => line.event === 'listening', 0, 60_000);
    return replica;
  };

  before(async () => {
    shared = makeFolder();
    policyFile = join(shared.folder, 'policies.ttl');
    writeFileSync(join(shared.folder, 'data.trig'), DATA);
    writeFileSync(policyFile, POLICIES_V1);
    // Oxigraph as the embedded store runs it, with an update endpoint: the application writes memberships.
    store = await startWritableStore([join(shared.folder, 'data.trig')]);
    for (let i = 0; i < REPLICAS; i += 1) ports.push(await freePort());
    replicas.push(...(await Promise.all(ports.map((_port, index) => startReplica(index)))));
    const lbPort = await freePort();
    lbUrl = `http://127.0.0.1:${lbPort}`;
    const config = [
      'global',
      '  maxconn 512',
      'defaults',
      '  mode http',
      '  timeout connect 2s',
      '  timeout client 30s',
      '  timeout server 30s',
      // A loaded machine may answer a check slowly: slow is not down.
      '  timeout check 2s',
      // A request sent to a replica that no longer accepts fails instead of being retried elsewhere:
      // only the replicas' drain (/readyz 503 while still serving) can keep the count at zero.
      '  retries 0',
      'frontend sparql',
      `  bind 127.0.0.1:${lbPort}`,
      '  default_backend guards',
      'backend guards',
      '  balance roundrobin',
      '  option httpchk GET /readyz',
      '  http-check expect status 200',
      `  default-server inter ${CHECK_INTERVAL_MS} fall 2 rise 2`,
      ...ports.map((port, index) => `  server guard${index} 127.0.0.1:${port} check`),
      '',
    ].join('\n');
    writeFileSync(join(shared.folder, 'haproxy.cfg'), config);
    haproxy = spawn(HAPROXY ?? 'haproxy', ['-db', '-f', join(shared.folder, 'haproxy.cfg')], { stdio: ['ignore', 'ignore', 'pipe'] });
    haproxy.stderr!.setEncoding('utf8').on('data', (text: string) => (haproxyErrors += text));
    await until(async () => (await graphCount(lbUrl)) === 1, 20_000, `HAProxy serves (${haproxyErrors})`);
  });

  after(async () => {
    haproxy?.kill('SIGTERM');
    await Promise.all(replicas.map((replica) => replica.stop()));
    await store?.close();
    shared?.remove();
  });

  /** Clients sending the query through HAProxy one after another until `stop`; every answer that is not 200 is a failure. */
  const steadyTraffic = () => {
    let running = true;
    let sent = 0;
    const failures: string[] = [];
    const counts = new Map<number, number>();
    const client = async () => {
      while (running) {
        const result = await graphCount(lbUrl);
        sent += 1;
        if (typeof result === 'string') failures.push(result);
        else counts.set(result, (counts.get(result) ?? 0) + 1);
      }
    };
    const clients = Array.from({ length: CLIENTS }, client);
    return {
      async stop() {
        running = false;
        await Promise.all(clients);
        return { sent, failures, counts };
      },
    };
  };

  it('a change of the shared policy file reaches every replica', async (t) => {
    const traffic = steadyTraffic();
    // Stopped even when a step fails: clients left looping would keep the file from ever ending.
    t.after(() => traffic.stop());
    const urls = ports.map((port) => `http://127.0.0.1:${port}`);
    assert.deepEqual(await Promise.all(urls.map(graphCount)), [1, 1, 1]);
    // An editor's save: write a temporary file, rename it over the original.
    writeFileSync(`${policyFile}.tmp`, POLICIES_V2);
    const changed = performance.now();
    renameSync(`${policyFile}.tmp`, policyFile);
    const reached: number[] = [];
    await until(
      async () => {
        const counts = await Promise.all(urls.map(graphCount));
        counts.forEach((count, index) => {
          if (count === 2 && reached[index] === undefined) reached[index] = performance.now() - changed;
        });
        return counts.every((count) => count === 2);
      },
      15_000,
      'every replica answers with the new set',
    );
    const { sent, failures } = await traffic.stop();
    const slowest = Math.max(...reached);
    t.diagnostic(
      `propagation: every replica answered with the new set ${slowest.toFixed(0)} ms after the rename (per replica: ${reached.map((ms) => ms.toFixed(0)).join(', ')} ms); ${sent} requests meanwhile, ${failures.length} failed`,
    );
    console.log(
      JSON.stringify({
        figure: 'reload-propagation',
        slowestMs: Math.round(slowest),
        perReplicaMs: reached.map(Math.round),
        requests: sent,
        failed: failures.length,
      }),
    );
    assert.deepEqual(failures, []);
    assert.equal(await graphCount(lbUrl), 2);
  });

  it('a membership written into the store reaches every replica within one refresh, and its removal as fast', async (t) => {
    const urls = ports.map((port) => `http://127.0.0.1:${port}`);
    const readsC = async (url: string): Promise<boolean | string> => {
      const ask = 'ASK { GRAPH <http://example.org/graphs/c> { ?s ?p ?o } }';
      const response = await fetch(`${url}/sparql?query=${encodeURIComponent(ask)}`, {
        headers: { 'x-remote-user': 'dave', accept: 'application/sparql-results+json' },
        signal: AbortSignal.timeout(10_000),
      });
      const body = await response.text();
      if (response.status === 403) return false;
      if (response.status !== 200) return `status ${response.status}: ${body.trim()}`;
      return (JSON.parse(body) as { boolean: boolean }).boolean;
    };
    /** Milliseconds until every replica answers `expected`, per replica. */
    const spread = async (expected: boolean, what: string): Promise<number[]> => {
      const since = performance.now();
      const reached: number[] = [];
      await until(
        async () => {
          const answers = await Promise.all(urls.map(readsC));
          answers.forEach((answer, index) => {
            if (answer === expected && reached[index] === undefined) reached[index] = performance.now() - since;
            if (answer !== expected) reached[index] = undefined as unknown as number;
          });
          return answers.every((answer) => answer === expected);
        },
        REFRESH_MS * 5,
        what,
      );
      return reached;
    };
    assert.deepEqual(await Promise.all(urls.map(readsC)), [false, false, false]);
    await store.update(`INSERT DATA { GRAPH <${APP_GRAPH}> { ${DAVE} } }`);
    const granted = await spread(true, 'every replica grants the new member');
    await store.update(`DELETE DATA { GRAPH <${APP_GRAPH}> { ${DAVE} } }`);
    const revoked = await spread(false, 'no replica serves the removed member');
    assert.equal(await readsC(lbUrl), false);
    const slowestGrant = Math.max(...granted);
    const slowestRevocation = Math.max(...revoked);
    t.diagnostic(
      `membership: granted on every replica ${slowestGrant.toFixed(0)} ms after the write, revoked on every replica ${slowestRevocation.toFixed(0)} ms after the delete (refreshMs ${REFRESH_MS})`,
    );
    console.log(
      JSON.stringify({
        figure: 'membership-propagation',
        refreshMs: REFRESH_MS,
        grantedMs: granted.map(Math.round),
        revokedMs: revoked.map(Math.round),
        untilNoReplicaServesRemovedMs: Math.round(slowestRevocation),
      }),
    );
    // Within one interval, plus one answer of the store and a load on a machine that may be busy.
    assert.ok(slowestGrant <= REFRESH_MS * 2.5, `granted within one refresh (${slowestGrant.toFixed(0)} ms)`);
    assert.ok(slowestRevocation <= REFRESH_MS * 2.5, `revoked within one refresh (${slowestRevocation.toFixed(0)} ms)`);
  });

  it('a rolling restart with SIGTERM, one replica at a time, fails no request', async (t) => {
    const traffic = steadyTraffic();
    // Stopped even when a step fails: clients left looping would keep the file from ever ending.
    t.after(() => traffic.stop());
    const started = performance.now();
    for (let index = 0; index < REPLICAS; index += 1) {
      const old = replicas[index]!;
      old.child.kill('SIGTERM');
      assert.equal(await old.exited(), 0, `replica ${index} exits 0 after SIGTERM: ${old.stderr()}`);
      replicas[index] = await startReplica(index);
      // Back in rotation: ready, and HAProxy has seen it up (rise 2 checks).
      await until(async () => (await fetch(`http://127.0.0.1:${ports[index]}/readyz`)).status === 200, 20_000, `replica ${index} ready`);
      await new Promise((done) => setTimeout(done, CHECK_INTERVAL_MS * 4));
    }
    const { sent, failures, counts } = await traffic.stop();
    const seconds = (performance.now() - started) / 1000;
    t.diagnostic(
      `rolling restart of ${REPLICAS} replicas in ${seconds.toFixed(1)} s: ${sent} requests through HAProxy, ${failures.length} failed`,
    );
    console.log(
      JSON.stringify({
        figure: 'rolling-restart',
        seconds: Number(seconds.toFixed(1)),
        requests: sent,
        failed: failures.length,
        failures: failures.slice(0, 5),
      }),
    );
    assert.ok(sent > 50, `steady traffic flowed (${sent} requests)`);
    assert.deepEqual(failures, []);
    assert.deepEqual([...counts.keys()], [2], 'every answer under the new set');
  });
});
