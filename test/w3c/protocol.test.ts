// The W3C SPARQL 1.1 Protocol tests (protocol/manifest.ttl), read from the manifest's HTTP descriptions and sent to a real guard on the embedded store: every query test as the manifest expects, every update refused with the store unchanged.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
// Test-side only: N3 reads the manifest (its requests are RDF in the W3C HTTP vocabulary).
import { DataFactory, Parser, Store, type Term } from 'n3';
import { startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';
import { W3C_SKIP, W3C_SUITE } from './w3c-evaluation.js';

const MF = 'http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#';
const HT = 'http://www.w3.org/2011/http#';
const CNT = 'http://www.w3.org/2011/content#';
const UT = 'http://www.w3.org/2009/sparql/tests/test-update#';
const RDF = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';
const RDFS = 'http://www.w3.org/2000/01/rdf-schema#';

/** One HTTP request of a test, as the manifest describes it, and what its response must be. */
interface ProtocolRequest {
  readonly method: string;
  /** The manifest's path, relative to its example endpoint `/sparql/`: the query string only. */
  readonly search: string;
  readonly headers: Record<string, string>;
  readonly body?: Buffer;
  /** Status classes the response may have, as `2xx`. */
  readonly statuses: readonly string[];
  readonly expectedBoolean?: boolean;
  /** `boolean`, `tabular` or `RDF`. */
  readonly expectedFormat?: string;
}

interface ProtocolTest {
  readonly name: string;
  readonly requests: readonly ProtocolRequest[];
  /** Graphs the test loads: the file and the graph's IRI. */
  readonly graphData: readonly { readonly file: string; readonly graph: string }[];
}

/** The tests of the manifest, in its order. */
function readProtocolTests(folder: string): ProtocolTest[] {
  const base = `file://${folder}/`;
  const store = new Store(new Parser({ baseIRI: `${base}manifest.ttl` }).parse(readFileSync(join(folder, 'manifest.ttl'), 'utf8')));
  const objects = (subject: Term, predicate: string): Term[] => store.getObjects(subject, DataFactory.namedNode(predicate), null);
  const one = (subject: Term, predicate: string): Term | undefined => objects(subject, predicate)[0];
  const list = (head: Term | undefined): Term[] => {
    const items: Term[] = [];
    for (let node = head; node !== undefined && node.value !== `${RDF}nil`; node = one(node, `${RDF}rest`)) {
      const item = one(node, `${RDF}first`);
      if (item !== undefined) items.push(item);
    }
    return items;
  };
  const entries = list(one(DataFactory.namedNode(`${base}manifest.ttl`), `${MF}entries`));
  return entries.map((test) => {
    const requests = list(one(one(test, `${MF}action`) as Term, `${HT}requests`)).map((request): ProtocolRequest => {
      const path = one(request, `${HT}absolutePath`)?.value ?? '';
      assert.match(path, /^\/sparql\/(\?|$)/, `${test.value}: a path under the manifest's example endpoint`);
      const headers: Record<string, string> = {};
      for (const header of list(one(request, `${HT}headers`))) {
        headers[one(header, `${HT}fieldName`)?.value ?? ''] = one(header, `${HT}fieldValue`)?.value ?? '';
      }
      const bodyNode = one(request, `${HT}body`);
      const chars = bodyNode === undefined ? undefined : (one(bodyNode, `${CNT}chars`)?.value ?? '');
      const encoding = bodyNode === undefined ? 'UTF-8' : (one(bodyNode, `${CNT}characterEncoding`)?.value ?? 'UTF-8');
      const response = one(request, `${HT}resp`) as Term;
      const expectedBoolean = one(response, `${MF}expectedBoolean`)?.value;
      return {
        method: one(request, `${HT}methodName`)?.value ?? 'GET',
        search: path.slice('/sparql/'.length),
        headers,
        // The one non-UTF-8 body of the suite is UTF-16 (with its byte order mark, as a client writes it).
        body:
          chars === undefined
            ? undefined
            : encoding.toUpperCase() === 'UTF-16'
              ? Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(chars, 'utf16le')])
              : Buffer.from(chars, 'utf8'),
        statuses: objects(response, `${MF}expectedStatus`).map((status) =>
          (/StatusCode(\dxx)$/.exec(status.value)?.[1] ?? status.value).toLowerCase(),
        ),
        expectedBoolean: expectedBoolean === undefined ? undefined : expectedBoolean === 'true',
        expectedFormat: one(response, `${MF}expectedFormat`)?.value,
      };
    });
    const graphData = objects(test, `${UT}graphData`).map((node) => ({
      file: (one(node, `${UT}graph`)?.value ?? '').replace(base, ''),
      graph: one(node, `${RDFS}label`)?.value ?? '',
    }));
    return { name: test.value.split('#')[1] ?? test.value, requests, graphData };
  });
}

/** Media types of each expected format (the manifest's names; RDFa is not a format a store answers a query with). */
const FORMATS: Record<string, RegExp> = {
  boolean: /^application\/sparql-results\+(json|xml)\b/,
  tabular: /^(application\/sparql-results\+(json|xml)|text\/csv|text\/tab-separated-values)\b/,
  RDF: /^(application\/rdf\+xml|text\/turtle|application\/n-triples)\b/,
};

const folder = W3C_SUITE === undefined ? undefined : join(W3C_SUITE, 'sparql11', 'protocol');
const tests = folder === undefined ? [] : readProtocolTests(folder);
const isUpdate = (test: ProtocolTest): boolean => test.name.startsWith('update_') || test.name.includes('_update');

describe('W3C SPARQL 1.1 Protocol tests through the guard', { skip: W3C_SKIP }, () => {
  let guard: TestGuard;
  let work: string;
  before(async () => {
    // Every graph a test loads, in the embedded store, each read by every caller (one policy).
    work = mkdtempSync(join(tmpdir(), 'sparql-guard-protocol-'));
    const graphs = new Map<string, string>();
    for (const test of tests) for (const { file, graph } of test.graphData) graphs.set(graph, file);
    const quads = [...graphs].flatMap(([graph, file]) =>
      readFileSync(join(folder ?? '', file), 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => line.replace(/\s*\.\s*$/, ` <${graph}> .`)),
    );
    writeFileSync(join(work, 'data.nq'), quads.join('\n') + '\n');
    writeFileSync(
      join(work, 'policies.ttl'),
      `@prefix guard: <https://w3id.org/sparql-guard#>.\n<urn:x-test:protocol> a guard:Policy; guard:agent guard:Everyone; guard:readGraph ${[...graphs.keys()].map((g) => `<${g}>`).join(', ')}.\n`,
    );
    guard = await startTestGuard({ policies: [join(work, 'policies.ttl')], embedded: { data: [join(work, 'data.nq')] } });
  });
  after(async () => {
    await guard?.close();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  /** Sends a request to the guard's endpoint (the manifest's example endpoint `/sparql/` replaced by it, as the suite's runners do). */
  const send = async (request: ProtocolRequest) => {
    const response = await fetch(`${guard.endpoint}${request.search === '' ? '' : `?${request.search.replace(/^\?/, '')}`}`, {
      method: request.method,
      headers: request.headers,
      body: request.body,
    });
    return {
      status: response.status,
      type: response.headers.get('content-type') ?? '',
      error: response.headers.get('sparql-guard-error'),
      body: await response.text(),
    };
  };

  it('reads the whole manifest: 34 tests, 13 queries that must answer, 7 updates, 14 requests that must be refused', () => {
    assert.equal(tests.length, 34);
    assert.equal(tests.filter((t) => !isUpdate(t) && t.requests.every((r) => r.statuses.includes('2xx'))).length, 13);
    assert.equal(tests.filter((t) => isUpdate(t) && t.requests[0]?.statuses.includes('2xx') === true).length, 7);
    assert.equal(tests.filter((t) => t.requests.every((r) => r.statuses.length === 1 && r.statuses[0] === '4xx')).length, 14);
  });

  for (const test of tests.filter((t) => !isUpdate(t))) {
    it(`${test.name}: as the manifest expects`, async () => {
      for (const request of test.requests) {
        const answer = await send(request);
        const statusClass = `${String(answer.status)[0]}xx`;
        assert.ok(
          request.statuses.includes(statusClass),
          `${test.name}: ${answer.status} (${answer.body.slice(0, 200)}), expected ${request.statuses.join(' or ')}`,
        );
        if (statusClass === '4xx') {
          // The guard's own refusal: its header and one line.
          assert.ok(answer.error !== null, `${test.name}: a refusal carries sparql-guard-error`);
          assert.doesNotMatch(answer.body.trim(), /\n/);
          continue;
        }
        if (request.expectedFormat !== undefined) {
          const format = FORMATS[request.expectedFormat];
          assert.ok(format !== undefined, `${test.name}: a format the test knows (${request.expectedFormat})`);
          assert.match(answer.type, format, `${test.name}: ${request.expectedFormat} answer`);
        }
        if (request.expectedBoolean !== undefined) {
          assert.equal(
            (JSON.parse(answer.body) as { boolean?: boolean }).boolean,
            request.expectedBoolean,
            `${test.name}: the ASK's answer`,
          );
        }
      }
    });
  }

  // Updates are refused (the contract): each update test's update gets the guard's 403, and the
  // test's own follow-up ASK, which checks that the update took effect, answers false.
  for (const test of tests.filter(isUpdate)) {
    it(`${test.name}: the update is refused and the store is unchanged`, async () => {
      const [update, ...checks] = test.requests;
      assert.ok(update !== undefined);
      const refused = await send(update);
      // A well-formed update gets the refusal of updates; a malformed one (the bad_update tests) may be refused for its form first.
      if (update.statuses.includes('2xx')) assert.equal(refused.status, 403, `${test.name}: ${refused.body}`);
      else assert.match(String(refused.status), /^4\d\d$/, `${test.name}: ${refused.body}`);
      assert.ok(refused.error !== null);
      assert.doesNotMatch(refused.body.trim(), /\n/);
      for (const check of checks) {
        const answer = await send(check);
        assert.equal(answer.status, 200, answer.body);
        if (check.expectedBoolean === true)
          assert.equal((JSON.parse(answer.body) as { boolean?: boolean }).boolean, false, `${test.name}: the update's effect is absent`);
      }
    });
  }
});
