// Apache Jena's own command-line client (rsparql, Debian's libapache-jena-java) sends the key of a http://user:KEY@host/sparql URL after the guard's 401 challenge.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { KEYS, select, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

const run = promisify(execFile);

/** Debian's Jena jars and their dependencies (libapache-jena-java). */
const JAVA_DIR = '/usr/share/java';
const JARS = [
  'jena-cmds',
  'jena-arq',
  'jena-base',
  'jena-core',
  'jena-iri',
  'slf4j-api',
  'slf4j-nop',
  'guava',
  'commons-csv',
  'commons-io',
  'commons-lang3',
  'commons-codec',
  'commons-compress',
  'commons-cli',
  'dexx.collection',
  'jsonld-java',
  'gson',
  'httpclient',
  'httpcore',
  'jackson-core',
  'jackson-databind',
  'jackson-annotations',
  'titanium-json-ld',
  'jakarta.json-api',
  'protobuf',
  'thrift',
];

/** Why the test cannot run here, or undefined. */
function missing(): string | undefined {
  if (!existsSync(join(JAVA_DIR, 'jena-cmds.jar'))) return `no ${JAVA_DIR}/jena-cmds.jar (apt-get install libapache-jena-java)`;
  for (const tool of ['java', 'unzip']) {
    const found = (process.env.PATH ?? '').split(':').some((folder) => existsSync(join(folder, tool)));
    if (!found) return `no ${tool} on PATH`;
  }
  return undefined;
}

const why = missing();
const COUNT = 'SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }';
const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-jena-'));
const AUTHENTICATED_ONLY = join(folder, 'authenticated-only.ttl');
writeFileSync(
  AUTHENTICATED_ONLY,
  `@prefix guard: <https://w3id.org/sparql-guard#> .
<http://example.org/policies/beta> a guard:Policy ; guard:group "beta" ; guard:readGraph <http://example.org/graphs/a>, <http://example.org/graphs/b> .
`,
);
after(() => rmSync(folder, { recursive: true, force: true }));

let classpath = '';
let closed: TestGuard;
let open: TestGuard;

/**
 * Debian's jena-core moves Jena's own Xerces classes to package `xerces.*` but leaves their
 * message bundles under org/apache/jena/ext/xerces/; without them XSDDatatype cannot start
 * ("internal error"). Copies of the bundles where the classes look make Jena run as packaged.
 */
async function bundlesFolder(): Promise<string> {
  const unpacked = join(folder, 'jar');
  await run('unzip', ['-q', '-o', join(JAVA_DIR, 'jena-core.jar'), 'org/apache/jena/ext/xerces/*.properties', '-d', unpacked]);
  const classes = join(folder, 'classes');
  for (const sub of ['impl/msg', 'impl/xpath/regex']) {
    const from = join(unpacked, 'org/apache/jena/ext/xerces', sub);
    if (!existsSync(from)) continue;
    mkdirSync(join(classes, 'xerces', sub), { recursive: true });
    for (const file of readdirSync(from)) await run('cp', [join(from, file), join(classes, 'xerces', sub, file)]);
  }
  return classes;
}

/** rsparql against `service`; its exit and output, never a throw. */
async function rsparql(service: string, query: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('java', ['-cp', classpath, 'arq.rsparql', '--service', service, '--results=JSON', query], {
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

const withKey = (endpoint: string, key: string) => endpoint.replace('http://', `http://user:${key}@`);
const countOf = (json: string) => (JSON.parse(json) as { results: { bindings: { n: { value: string } }[] } }).results.bindings[0]?.n.value;

describe('Jena rsparql through the guard', { skip: why === undefined ? false : `Jena's client cannot run: ${why}` }, () => {
  before(async () => {
    const jars = JARS.map((jar) => join(JAVA_DIR, `${jar}.jar`)).filter((jar) => existsSync(jar));
    classpath = [await bundlesFolder(), ...jars].join(':');
    [closed, open] = await Promise.all([startTestGuard({ policies: [AUTHENTICATED_ONLY] }), startTestGuard()]);
  });
  after(async () => {
    await Promise.all([closed?.close(), open?.close()]);
  });

  it('answers the 401 challenge with the URL key where anonymous callers have no policy', async () => {
    const expected = (await select(closed.endpoint, COUNT, { key: KEYS.beta })).rows[0]?.n;
    const before = closed.logs.length;
    const answer = await rsparql(withKey(closed.endpoint, KEYS.beta), COUNT);
    assert.equal(answer.code, 0, answer.stderr);
    assert.equal(countOf(answer.stdout), expected);
    const lines = closed.logs.slice(before).filter((line) => line.path === '/sparql');
    assert.deepEqual(
      lines.map((line) => [line.status, line.agent]),
      [
        [401, 'https://w3id.org/sparql-guard#Anonymous'],
        [200, 'http://example.org/agents/beta-user'],
      ],
      'the challenge, then the query as beta',
    );
  });

  it('fails on a wrong key, with the 401 in its message', async () => {
    const answer = await rsparql(withKey(closed.endpoint, 'not-a-key'), COUNT);
    assert.notEqual(answer.code, 0);
    assert.match(answer.stderr, /401/);
  });

  it("sends the key at once as a header given in code (Jena's QueryExecutionHTTP), anonymous policy or not", async (context) => {
    const hasJavac = (process.env.PATH ?? '').split(':').some((folder) => existsSync(join(folder, 'javac')));
    if (!hasJavac) return context.skip('no javac on PATH to compile the snippet');
    const source = join(folder, 'KeyedQuery.java');
    writeFileSync(
      source,
      `import org.apache.jena.query.*;
import org.apache.jena.sparql.exec.http.QueryExecutionHTTP;
public class KeyedQuery {
  public static void main(String[] args) {
    try (QueryExecution qe = QueryExecutionHTTP.service(args[0]).query(args[2]).httpHeader("Authorization", "Bearer " + args[1]).build()) {
      ResultSetFormatter.outputAsJSON(System.out, qe.execSelect());
    }
  }
}
`,
    );
    await run('javac', ['-cp', classpath, '-d', folder, source], { timeout: 120_000 });
    const keyed = (await select(open.endpoint, COUNT, { key: KEYS.beta })).rows[0]?.n;
    const before = open.logs.length;
    const { stdout } = await run('java', ['-cp', `${folder}:${classpath}`, 'KeyedQuery', open.endpoint, KEYS.beta, COUNT], {
      timeout: 60_000,
    });
    assert.equal(countOf(stdout), keyed);
    assert.equal(open.logs.slice(before).find((line) => line.path === '/sparql')?.agent, 'http://example.org/agents/beta-user');
  });

  it('runs as anonymous where anonymous callers have a policy: Jena sends the URL key only after a 401', async () => {
    const anonymous = (await select(open.endpoint, COUNT)).rows[0]?.n;
    const keyed = (await select(open.endpoint, COUNT, { key: KEYS.beta })).rows[0]?.n;
    assert.notEqual(anonymous, keyed);
    const before = open.logs.length;
    const answer = await rsparql(withKey(open.endpoint, KEYS.beta), COUNT);
    assert.equal(answer.code, 0, answer.stderr);
    assert.equal(countOf(answer.stdout), anonymous, 'docs/authentication.md says so, in its Clients table');
    assert.equal(open.logs.slice(before).find((line) => line.path === '/sparql')?.agent, 'https://w3id.org/sparql-guard#Anonymous');
  });
});
