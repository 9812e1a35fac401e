// The stores a security test runs against: the embedded Oxigraph always, plus each rig store named in the environment.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sha256, startTestGuard, type TestGuard } from './start-test-guard.js';

/** One store the guard can stand in front of; `queryUrl` undefined = the embedded store. */
export interface StoreUnderTest {
  readonly name: string;
  readonly queryUrl: string | undefined;
}

/**
 * Rig stores that honour FROM / FROM NAMED, by the variable `rig/up.sh` writes into
 * endpoints.env. oxigraph-union is left out on purpose: it ignores FROM, and the guard
 * refuses it (test/security/store-ignores-dataset.test.ts).
 */
const RIG_VARIABLES: readonly (readonly [string, string])[] = [
  ['oxigraph', 'RIG_OXIGRAPH_QUERY'],
  ['jena', 'RIG_JENA_QUERY'],
  ['virtuoso', 'RIG_VIRTUOSO_QUERY'],
  ['jena-arq', 'RIG_JENA_ARQ_QUERY'],
  ['jena-mem', 'RIG_JENA_MEM_QUERY'],
  ['jena-union', 'RIG_JENA_UNION_QUERY'],
];

/** The rig stores whose RIG_*_QUERY variable is set. */
export function rigStores(): StoreUnderTest[] {
  return RIG_VARIABLES.flatMap(([name, variable]) => {
    const queryUrl = process.env[variable];
    return queryUrl ? [{ name, queryUrl }] : [];
  });
}

/**
 * The rig stores whose RIG_*_QUERY variable is not set, each with the reason a test that
 * would run against it says it was skipped.
 */
export function absentRigStores(): { readonly name: string; readonly skip: string }[] {
  return RIG_VARIABLES.flatMap(([name, variable]) =>
    process.env[variable] ? [] : [{ name, skip: `${variable} is not set (the store lab is not up)` }],
  );
}

/**
 * Rig stores the suites that run once per store leave out: jena-mem answers as jena on TDB2 for every
 * probe of the lab (shared/rig/README.md), so they run on one of the two (about 2 minutes of CI); the
 * store suite's hazards, writer and blank-node tests keep it.
 */
const ANSWERS_AS_JENA = new Set(['jena-mem']);

/**
 * Jena's variants, which answer the text the guard forwards as jena does: jena-arq differs on `DESCRIBE … FROM`, and
 * jena-union on a query without a dataset clause (shared/rig/README.md), and the guard forwards neither (a DESCRIBE
 * goes as a CONSTRUCT; every forwarded query names its dataset, EMPTY_GRAPH for none). The suites that send the
 * forms where they differ (dataset clauses, DESCRIBE, the stores' graph names, graph patterns) run on them; the
 * others would repeat jena's answers (about 5 minutes of CI). A forwarded query without its dataset would still
 * show elsewhere: the store's default graph holds CANARY-DEFAULT on jena and Oxigraph, and Virtuoso reads the union.
 */
const JENA_VARIANTS = new Set(['jena-arq', 'jena-union']);

/** The suites' default choice of stores: each engine once, Jena's variants left out. */
export const oneStorePerEngine = ({ name }: StoreUnderTest): boolean => !JENA_VARIANTS.has(name);

/** For the suites that send what Jena's variants answer otherwise: every store. */
export const everyStore = (): boolean => true;

/** The rig stores that are up, jena-mem left out, and Jena's variants unless `withJenaVariants`. */
export function labStoresUnderTest(withJenaVariants = false): StoreUnderTest[] {
  return rigStores().filter((store) => !ANSWERS_AS_JENA.has(store.name) && (withJenaVariants || oneStorePerEngine(store)));
}

/** The embedded store first (always), then labStoresUnderTest(withJenaVariants). */
export function storesUnderTest(withJenaVariants = false): StoreUnderTest[] {
  return [{ name: 'embedded', queryUrl: undefined }, ...labStoresUnderTest(withJenaVariants)];
}

/** The lab's dataset file (RIG_DIR, or the lab beside the clone), or undefined without a lab. */
export function rigDataset(): string | undefined {
  return [
    process.env.RIG_DIR ? resolve(process.env.RIG_DIR, 'data/dataset.trig') : '',
    resolve('../shared/rig/data/dataset.trig'),
    resolve('../../shared/rig/data/dataset.trig'),
  ].find((file) => file !== '' && existsSync(file));
}

/**
 * The rig dataset (the same file every rig store was loaded with) when the rig folder is
 * beside the clone, else the verbatim copy in test/fixtures/security/ (1395 quads).
 */
export const SECURITY_DATA = rigDataset() ?? resolve('test/fixtures/security/dataset.trig');

export const SECURITY_POLICIES = resolve('test/fixtures/security/policies.ttl');

export const EX = 'http://example.org/';
export const GRAPHS = {
  public1: `${EX}g/public1`,
  public2: `${EX}g/public2`,
  teamA: `${EX}g/teamA`,
  teamB: `${EX}g/teamB`,
  secret: `${EX}g/secret`,
  /** Virtuoso's name for the file's default graph (rig README); an ordinary IRI elsewhere. */
  virtuosoDefault: `${EX}g/default`,
} as const;

/** Fingerprint bits of the rig dataset: `ex:fingerprint ex:graphBit 2^k` in every graph. */
export const BITS = { default: 1, public1: 2, public2: 4, teamA: 8, teamB: 16, secret: 32 } as const;

/** Callers of the security policies. */
export const CALLERS = {
  /** No credentials: public1 only. */
  anonymous: undefined,
  /** Group team-a: public1 and teamA. */
  reader: 'sec-test-key-reader-0123456789abcdef',
  /** Granted every rig graph, secret included: proves the canaries are there to be found. */
  keeper: 'sec-test-key-keeper-0123456789abcdef',
} as const;
export type CallerName = keyof typeof CALLERS;

/** Bits each caller may see. */
export const ALLOWED_BITS: Readonly<Record<CallerName, readonly number[]>> = {
  anonymous: [BITS.public1],
  reader: [BITS.public1, BITS.teamA],
  keeper: [BITS.public1, BITS.public2, BITS.teamA, BITS.teamB, BITS.secret],
};

const API_KEYS = [
  { agent: 'http://example.org/agents/reader', groups: ['team-a'], sha256: sha256(CALLERS.reader) },
  { agent: 'http://example.org/agents/keeper', groups: [], sha256: sha256(CALLERS.keeper) },
];

/** Starts a guard over the security policies in front of `store` (explain on). */
export function startSecurityGuard(store: StoreUnderTest, config: Record<string, unknown> = {}): Promise<TestGuard> {
  return startTestGuard({
    policies: [SECURITY_POLICIES],
    auth: { apiKeys: API_KEYS },
    explain: true,
    ...(store.queryUrl === undefined ? { embedded: { data: [SECURITY_DATA] } } : { upstream: store.queryUrl, embedded: undefined }),
    ...config,
  });
}

/**
 * Declares `suite` once per store under test, each with its own running guard,
 * reachable through the getter handed to the suite.
 */
export function describeOnEveryStore(
  title: string,
  suite: (guard: () => TestGuard, store: StoreUnderTest) => void,
  config: Record<string, unknown> = {},
  stores: (store: StoreUnderTest) => boolean = oneStorePerEngine,
): void {
  for (const store of storesUnderTest(true).filter(stores)) {
    describe(`${title} [${store.name}]`, () => {
      let running: TestGuard | undefined;
      before(async () => {
        running = await startSecurityGuard(store, config);
      });
      after(async () => {
        await running?.close();
      });
      suite(() => {
        assert.ok(running, 'guard started');
        return running;
      }, store);
    });
  }
  describeAbsentLabStores(title, stores);
}

/**
 * Declares, per lab store a suite run on every store would reach but that is not up (jena-mem
 * left out, as labStoresUnderTest leaves it out), one skipped test saying why: without it a fresh
 * clone's run named the embedded store alone, and the lab's stores vanished unsaid (test/README.md).
 */
export function describeAbsentLabStores(title: string, keep: (store: StoreUnderTest) => boolean = oneStorePerEngine): void {
  for (const { name, skip } of absentRigStores()) {
    if (ANSWERS_AS_JENA.has(name) || !keep({ name, queryUrl: undefined })) continue;
    describe(`${title} [${name}]`, () => {
      it('runs against this store', { skip }, () => {});
    });
  }
}

/** Text that only data outside the reader's and anonymous grant contains. */
const LEAK_MARKERS = /CANARY|TEAM-B-NOTE|Artikel|Articulo/;

/** Fails when `body` holds a canary of a graph outside `caller`'s grant. */
export function assertNoLeak(body: string, caller: CallerName, what: string): void {
  if (caller === 'keeper') return;
  const found = LEAK_MARKERS.exec(body);
  if (found) assert.fail(`${what}: leaked to ${caller}: ...${body.slice(Math.max(0, found.index - 40), found.index + 40)}...`);
  if (caller === 'anonymous') assert.doesNotMatch(body, /TEAM-A-NOTE|Objet /, `${what}: leaked teamA to anonymous`);
}

/** One request through the guard; the raw answer. */
export interface Attempt {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

/** Options of {@link send}. */
export interface SendOptions {
  readonly caller?: CallerName;
  /** Protocol parameters beside `query` (repeatable). */
  readonly params?: Readonly<Record<string, readonly string[]>>;
  readonly accept?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** 'form' (default), 'get' or 'direct' (application/sparql-query, params in the URL). */
  readonly method?: 'form' | 'get' | 'direct';
  /** Path after the endpoint, e.g. '/explain'. */
  readonly suffix?: string;
}

/** Sends `query` through the guard the way a client would. */
export async function send(endpoint: string, query: string | undefined, options: SendOptions = {}): Promise<Attempt> {
  const params = new URLSearchParams();
  if (query !== undefined) params.append('query', query);
  for (const [name, values] of Object.entries(options.params ?? {})) for (const value of values) params.append(name, value);
  const key = CALLERS[options.caller ?? 'anonymous'];
  const headers: Record<string, string> = {
    accept: options.accept ?? 'application/sparql-results+json, text/turtle;q=0.9',
    ...(key ? { authorization: `Bearer ${key}` } : {}),
    ...options.headers,
  };
  const url = endpoint + (options.suffix ?? '');
  let response: Response;
  if (options.method === 'get') {
    response = await fetch(`${url}?${params}`, { headers });
  } else if (options.method === 'direct') {
    params.delete('query');
    response = await fetch(`${url}?${params}`, {
      method: 'POST',
      headers: { 'content-type': 'application/sparql-query', ...headers },
      body: query ?? '',
    });
  } else {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: params,
    });
  }
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', body: await response.text() };
}

/** Values of `variable` in a SPARQL JSON result body. */
export function bindings(body: string, variable: string): string[] {
  const json = JSON.parse(body) as { results?: { bindings: Record<string, { value: string }>[] } };
  return (json.results?.bindings ?? []).flatMap((row) => (row[variable] ? [row[variable].value] : []));
}

/** The fingerprint bits in a result body binding `?b`, sorted. */
export function bitsIn(body: string): number[] {
  return [...new Set(bindings(body, 'b').map(Number))].sort((x, y) => x - y);
}

/** The boolean of an ASK answer in SPARQL JSON. */
export function askAnswer(body: string): boolean {
  const json = JSON.parse(body) as { boolean?: unknown };
  assert.equal(typeof json.boolean, 'boolean', 'an ASK answer');
  return json.boolean as boolean;
}

/** What an attack must get back. */
export type Expectation =
  /** A refusal by the guard with this status (the store never sees the query). */
  | { readonly status: number }
  /** 200 and exactly these fingerprint bits in `?b` (an empty list = no row). */
  | { readonly bits: readonly number[] }
  /** 200 and this ASK answer. */
  | { readonly ask: boolean }
  /** 200; the caller's own data may or may not be there, nothing else. */
  | { readonly ok: true }
  /** An error status from the store itself (a store bug the guard passes on); still no leak. */
  | { readonly storeError: true };

/** One attack: a request and what it must get back, for one caller. */
export interface Attack extends SendOptions {
  readonly name: string;
  readonly query: string | undefined;
  readonly expect: Expectation;
  /** Per-store exception, with the reason, where the stores legitimately differ. */
  readonly expectOn?: Readonly<Record<string, Expectation>>;
  /**
   * Per store, a leak found and not closed yet: the test still runs and reports, as a
   * node:test `todo`, so `npm test` stays green while the finding stays visible.
   */
  readonly knownLeak?: Readonly<Record<string, string>>;
  /** Text a 200 answer must contain: the caller's own data does come back. */
  readonly mustContain?: string;
}

/** Declares one node:test per attack for `store`, known leaks as todo. */
export function itAttacks(attacks: readonly Attack[], guard: () => { endpoint: string }, store: StoreUnderTest): void {
  for (const attack of attacks) {
    const todo = attack.knownLeak?.[store.name];
    it(attack.name, todo === undefined ? {} : { todo: `known leak: ${todo}` }, async () => {
      await runAttack(guard().endpoint, attack, store);
    });
  }
}

/** Runs one attack through the guard: never a leak, and exactly the expected answer. */
export async function runAttack(endpoint: string, attack: Attack, store: StoreUnderTest): Promise<Attempt> {
  const caller = attack.caller ?? 'anonymous';
  const answer = await send(endpoint, attack.query, attack);
  assertNoLeak(answer.body, caller, attack.name);
  const expect = attack.expectOn?.[store.name] ?? attack.expect;
  if ('storeError' in expect) {
    assert.ok(answer.status >= 400, `${attack.name}: a store error (${answer.status})`);
    return answer;
  }
  if ('status' in expect) {
    assert.equal(answer.status, expect.status, `${attack.name}: status (${answer.body.trim().slice(0, 200)})`);
    assert.match(answer.contentType, /^text\/plain/, `${attack.name}: the guard's own refusal`);
    return answer;
  }
  assert.equal(answer.status, 200, `${attack.name}: status (${answer.body.trim().slice(0, 300)})`);
  if (attack.mustContain !== undefined)
    assert.ok(answer.body.includes(attack.mustContain), `${attack.name}: answer lacks ${attack.mustContain}`);
  if ('bits' in expect) {
    const bits = bitsIn(answer.body);
    for (const bit of bits) assert.ok(ALLOWED_BITS[caller].includes(bit), `${attack.name}: graph bit ${bit} leaked to ${caller}`);
    assert.deepEqual(
      bits,
      [...expect.bits].sort((x, y) => x - y),
      `${attack.name}: graphs seen`,
    );
  } else if ('ask' in expect) {
    assert.equal(askAnswer(answer.body), expect.ask, `${attack.name}: ASK answer`);
  }
  return answer;
}
