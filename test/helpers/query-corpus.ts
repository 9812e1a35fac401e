// The queries the project holds (golden fixtures, the W3C suites, the security suites and benches), with grants to plan them under and mutations of their constants: the corpus of the plan-shape oracles.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Grant } from '../../src/policy/policy-set.js';
import { lexQueryShape } from '../../src/sparql/lex-query-shape.js';
import { W3C_SUITE, readW3cTests } from '../w3c/w3c-evaluation.js';
import { readGoldenCase } from './golden-case.js';

/** One query the project holds, with the grants and settings it is planned under. */
export interface Source {
  readonly name: string;
  readonly query: string;
  readonly grants: readonly Grant[];
  readonly defaultGraphs: string[];
  readonly namedGraphs: string[];
  readonly allowedFunctions: readonly string[];
}

export const HIDDEN = 'http://example.org/hidden';
const GRAPHS = ['http://example.org/g/public1', 'http://example.org/g/public2', 'http://example/g', 'http://example.org/g'];
/** Plain, hidden paths on the granted graphs (some the W3C queries name), nothing granted. */
export const GRANTS: readonly Grant[] = [
  { policies: ['urn:test:plain'], graphs: new Set(GRAPHS), hiddenByGraph: new Map() },
  {
    policies: ['urn:test:hidden'],
    graphs: new Set(GRAPHS),
    hiddenByGraph: new Map(
      GRAPHS.map((g) => [g, new Set([HIDDEN, 'http://example.org/ns#p', 'http://xmlns.com/foaf/0.1/name', 'http://example/q'])]),
    ),
  },
  // Hidden sets per graph that differ: GRAPH <iri> and GRAPH ?var slots filled per graph, the default graph (all four merged) checked per graph.
  {
    policies: ['urn:test:per-graph'],
    graphs: new Set(GRAPHS),
    hiddenByGraph: new Map([
      [GRAPHS[0] ?? '', new Set([HIDDEN, 'http://example.org/ns#p'])],
      [GRAPHS[2] ?? '', new Set(['http://xmlns.com/foaf/0.1/name'])],
    ]),
  },
  { policies: ['urn:test:none'], graphs: new Set(), hiddenByGraph: new Map() },
  // A result cap (guard:resultLimit): the LIMIT written per request after the template is filled.
  { policies: ['urn:test:capped'], graphs: new Set(GRAPHS), hiddenByGraph: new Map(), limits: { resultLimit: 7 } },
];
const W3C_ALLOWED_FUNCTIONS = ['http://example.org/ns#', 'http://example.org/name', 'http://example/function'];

export function goldenSources(): Source[] {
  const folder = join('test', 'fixtures', 'sparql', 'golden');
  return readdirSync(folder)
    .filter((name) => name.endsWith('.txt'))
    .sort()
    .map((name) => {
      const golden = readGoldenCase(readFileSync(join(folder, name), 'utf8'));
      const grant: Grant = { ...golden.grant, policies: ['urn:test:golden'] };
      const { query, defaultGraphs, namedGraphs, allowedFunctions } = golden;
      return { name: `golden ${name}`, query, grants: [grant, ...GRANTS], defaultGraphs, namedGraphs, allowedFunctions };
    });
}

export function w3cSources(): Source[] {
  if (W3C_SUITE === undefined) return [];
  const seen = new Set<string>();
  const sources: Source[] = [];
  for (const t of readW3cTests()) {
    const file = t.query ?? '';
    if (!file.endsWith('.rq') || seen.has(file)) continue;
    seen.add(file);
    const query = readFileSync(join(W3C_SUITE, file), 'utf8');
    sources.push({ name: file, query, grants: GRANTS, defaultGraphs: [], namedGraphs: [], allowedFunctions: W3C_ALLOWED_FUNCTIONS });
  }
  return sources;
}

/** Query texts written in the security suites and the benches (string and template literals holding a query form). */
export function embeddedSources(): Source[] {
  const files = [
    ...readdirSync(join('test', 'security')).map((name) => join('test', 'security', name)),
    ...readdirSync('bench').map((name) => join('bench', name)),
  ].filter((path) => path.endsWith('.ts') && existsSync(path));
  const sources: Source[] = [];
  for (const path of files) {
    const text = readFileSync(path, 'utf8');
    for (const match of text.matchAll(/`((?:[^`\\]|\\.)*)`|'((?:[^'\\\n]|\\.)*)'/g)) {
      const literal = (match[1] ?? match[2] ?? '').replace(/\\n/g, '\n');
      if (!/\b(SELECT|ASK|CONSTRUCT|DESCRIBE)\b/.test(literal) || !/[{]/.test(literal)) continue;
      sources.push({ name: `${path} literal`, query: literal, grants: GRANTS, defaultGraphs: [], namedGraphs: [], allowedFunctions: [] });
    }
  }
  return sources;
}

/** A small seeded generator, so a failure reproduces. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Replacement constants per class, the awkward ones included (escapes, quotes, dot segments, the hidden predicate). */
export const POOLS: Readonly<Record<string, readonly string[]>> = {
  S: [
    '"x"',
    "'y'",
    '"""a\n"b"""',
    "'''c''d'''",
    '"q\\"\'\\\\\\n\\t"',
    '""',
    '"\u00e9\u2028\ud83d\ude00"',
    '"12"',
    "'1.0'",
    '"true"',
    '"2008-02-29"',
  ],
  I: [
    `<${HIDDEN}>`,
    '<http://example.org/m/a>',
    '<rel/./x/../y>',
    '<#frag>',
    '<http://example.org/ns#p>',
    '<http://example/q>',
    '<urn:x-sparql-guard:empty>',
    '<http://example.org/\u00e9\ud83d\ude00>',
    '<http://example.org/a\u00a0b\u007f>',
    // Not IRI references as RFC 3987 writes them (SPARQL 1.1 §19.5): a port of letters, a bare %, brackets in a path, two #.
    '<http://example.com:p>',
    '<a%zz>',
    '<http://example.org/a[1]>',
    '<http://example.org/#a#b>',
  ],
  N: ['0', '42', '007', '123456789012345678901234567890'],
  D: ['.5', '0.0', '12.250'],
  E: ['1e0', '1.5E+07', '.2e-3', '4E4'],
};

/**
 * Local parts of prefixed names ([169] PN_LOCAL): the lexer reads ASCII by a character table and hands anything
 * else to the grammar's regular expressions, so its edges are here (letters beyond ASCII and astral ones, `·` and
 * combining marks inside, PN_LOCAL_ESC, `%` hex, a colon, a digit or `_` first, dots inside).
 */
export const LOCALS = [
  'm',
  'm',
  '\u00e9',
  '\ud83d\ude00x',
  'm\u00b7\u0301',
  'm\\-',
  'm\\.',
  'm%41',
  'm:',
  '0',
  '_',
  'a.b',
  'a\\~b.',
  'm\\%',
  'm\\#x\\#y',
];

/**
 * `query` with its constants replaced (one mutation of several), or undefined when it has none to replace. The code
 * between them is the shape's (white space and comments as one space), or with `asWritten` the text's own.
 */
export function mutate(query: string, seed: number, asWritten = false): string | undefined {
  const shape = lexQueryShape(query, 'http://localhost/');
  if (shape === undefined || shape.raw.length === 0) return undefined;
  const { spans } = shape;
  const code = asWritten
    ? [0, ...spans, query.length].flatMap((at, i, all) => (i % 2 === 0 ? [query.slice(at, all[i + 1])] : []))
    : shape.code;
  const next = random(seed);
  let out = code[0] ?? '';
  for (let o = 0; o < shape.refs.length; o++) {
    const k = shape.refs[o] ?? 0;
    const cls = shape.classes[k] ?? 'S';
    const pool = POOLS[cls] ?? [];
    // Prefixed names keep their prefix half the time (the same token class, a different local part).
    const raw = shape.raw[k] ?? '';
    const local = LOCALS[Math.floor(next() * LOCALS.length)] ?? 'm';
    const pname = cls === 'I' && !raw.startsWith('<') && next() < 0.5 ? raw.replace(/:.*$/, ':' + local + k) : undefined;
    out += next() < 0.2 ? raw : (pname ?? pool[Math.floor(next() * pool.length)] ?? raw);
    out += code[o + 1] ?? '';
  }
  return out;
}
