// The SPARQL 1.1 Service Description of the endpoint, as one caller sees it (W3C SPARQL 1.1 Service Description).

import { viewColumns } from '../policy/grant.js';
import type { GraphView } from '../policy/policy-set.js';
import { GUARD } from '../vocabulary.js';
import type { EndpointView } from './choose-endpoint-view.js';

const SD = 'http://www.w3.org/ns/sparql-service-description#';
const FORMATS = 'http://www.w3.org/ns/formats/';
const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';

/**
 * Answer formats the guard asks the store for when a client names them; the store decides in
 * the end (its status and Content-Type come back unchanged).
 */
const RESULT_FORMATS = [
  'SPARQL_Results_JSON',
  'SPARQL_Results_XML',
  'SPARQL_Results_CSV',
  'SPARQL_Results_TSV',
  'Turtle',
  'N-Triples',
  'RDF_XML',
].map((name) => `${FORMATS}${name}`);

/** What the description says: the endpoint and the caller's own access, never a policy IRI. */
export interface ServiceFacts {
  /** The endpoint IRI; '' is the document's own URL (Turtle and JSON-LD resolve it, N-Triples cannot). */
  readonly endpoint: string;
  readonly agent: string;
  readonly groups: readonly string[];
  /** The graphs the caller's grant lets it read. */
  readonly graphs: readonly string[];
  /** Per granted graph, the predicates hidden from the caller there (Grant.hiddenByGraph); absent = none. */
  readonly hiddenByGraph?: ReadonlyMap<string, ReadonlySet<string>>;
  /** Per granted graph with columns or rows (Grant.views): what the caller reads of it. */
  readonly views?: ReadonlyMap<string, GraphView>;
}

type Term = { readonly iri: string } | { readonly blank: string } | { readonly literal: string } | { readonly boolean: boolean };
type Triple = readonly [Term, string, Term];

/**
 * Serializes the description in `view` (an RDF media type). The caller's dataset is
 * `sd:defaultDataset`: its default graph is the merge of the granted graphs (hence
 * `sd:UnionDefaultGraph`), its named graphs are the granted graphs, and nothing else. The caller
 * is `guard:caller`, with `guard:agent` and `guard:group`. Each named graph lists with
 * `guard:hidePath` the predicates hidden from the caller in it (the policy term, read the same
 * way: in this graph, these predicates are withheld), so a caller knows an answer is partial.
 */
export function describeService(facts: ServiceFacts, view: Exclude<EndpointView, 'text/html'>): string {
  const triples = triplesOf(facts);
  if (view === 'application/ld+json') return `${JSON.stringify(jsonLdOf(facts), null, 2)}\n`;
  return triples.map(([subject, predicate, object]) => `${termText(subject)} <${predicate}> ${termText(object)} .\n`).join('');
}

function triplesOf(facts: ServiceFacts): Triple[] {
  const service = { iri: facts.endpoint };
  const dataset = { blank: 'dataset' };
  const defaultGraph = { blank: 'default' };
  const caller = { blank: 'caller' };
  const triples: Triple[] = [
    [service, RDF_TYPE, { iri: `${SD}Service` }],
    [service, `${SD}endpoint`, service],
    [service, `${SD}supportedLanguage`, { iri: `${SD}SPARQL11Query` }],
    [service, `${SD}feature`, { iri: `${SD}UnionDefaultGraph` }],
    ...RESULT_FORMATS.map((format): Triple => [service, `${SD}resultFormat`, { iri: format }]),
    [service, `${SD}defaultDataset`, dataset],
    [dataset, RDF_TYPE, { iri: `${SD}Dataset` }],
    [dataset, `${SD}defaultGraph`, defaultGraph],
    [defaultGraph, RDF_TYPE, { iri: `${SD}Graph` }],
  ];
  facts.graphs.forEach((graph, index) => {
    const named = { blank: `graph${index}` };
    triples.push([dataset, `${SD}namedGraph`, named], [named, RDF_TYPE, { iri: `${SD}NamedGraph` }], [named, `${SD}name`, { iri: graph }]);
    for (const path of hiddenIn(facts, graph)) triples.push([named, `${GUARD}hidePath`, { iri: path }]);
    for (const path of readIn(facts, graph)) triples.push([named, `${GUARD}readPath`, { iri: path }]);
    if (rowsRestrictedIn(facts, graph)) triples.push([named, `${GUARD}rowsRestricted`, { boolean: true }]);
  });
  triples.push([service, `${GUARD}caller`, caller], [caller, `${GUARD}agent`, { iri: facts.agent }]);
  for (const group of facts.groups) triples.push([caller, `${GUARD}group`, { literal: group }]);
  return triples;
}

/** The same statements as JSON-LD 1.1, compacted by hand against one context. */
function jsonLdOf(facts: ServiceFacts): Record<string, unknown> {
  return {
    '@context': { sd: SD, guard: GUARD, formats: FORMATS },
    '@id': facts.endpoint,
    '@type': 'sd:Service',
    'sd:endpoint': { '@id': facts.endpoint },
    'sd:supportedLanguage': { '@id': 'sd:SPARQL11Query' },
    'sd:feature': { '@id': 'sd:UnionDefaultGraph' },
    'sd:resultFormat': RESULT_FORMATS.map((format) => ({ '@id': format })),
    'sd:defaultDataset': {
      '@type': 'sd:Dataset',
      'sd:defaultGraph': { '@type': 'sd:Graph' },
      'sd:namedGraph': facts.graphs.map((graph) => {
        const hidden = hiddenIn(facts, graph);
        const read = readIn(facts, graph);
        return {
          '@type': 'sd:NamedGraph',
          'sd:name': { '@id': graph },
          ...(hidden.length > 0 && { 'guard:hidePath': hidden.map((path) => ({ '@id': path })) }),
          ...(read.length > 0 && { 'guard:readPath': read.map((path) => ({ '@id': path })) }),
          ...(rowsRestrictedIn(facts, graph) && { 'guard:rowsRestricted': true }),
        };
      }),
    },
    'guard:caller': {
      'guard:agent': { '@id': facts.agent },
      'guard:group': facts.groups.map((group) => ({ '@value': group })),
    },
  };
}

/** The predicates hidden from the caller in `graph`, sorted (the description is the same text for the same grant). */
function hiddenIn(facts: ServiceFacts, graph: string): string[] {
  const view = facts.views?.get(graph);
  if (view !== undefined) {
    const columns = viewColumns(view);
    return columns.allow ? [] : [...columns.set].sort();
  }
  const hidden = facts.hiddenByGraph?.get(graph);
  return hidden === undefined ? [] : [...hidden].sort();
}

/** The predicates the caller may read in `graph` when its policies list them (guard:readPath), sorted; empty otherwise. */
function readIn(facts: ServiceFacts, graph: string): string[] {
  const view = facts.views?.get(graph);
  if (view === undefined) return [];
  const columns = viewColumns(view);
  return columns.allow ? [...columns.set].sort() : [];
}

/** True when a row rule decides which records of `graph` the caller reads. */
function rowsRestrictedIn(facts: ServiceFacts, graph: string): boolean {
  return (facts.views?.get(graph)?.rows.length ?? 0) > 0;
}

function termText(term: Term): string {
  if ('iri' in term) return `<${escapeIri(term.iri)}>`;
  if ('blank' in term) return `_:${term.blank}`;
  if ('boolean' in term) return `"${term.boolean}"^^<http://www.w3.org/2001/XMLSchema#boolean>`;
  return `"${escapeString(term.literal)}"`;
}

/** N-Triples IRIREF: characters outside it are written as UCHAR escapes (they cannot occur in policy IRIs, but a group can). */
function escapeIri(iri: string): string {
  return iri.replace(/[\u0000-\u0020<>"{}|^`\\]/gu, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`);
}

/** N-Triples STRING_LITERAL_QUOTE escapes (ECHAR). */
function escapeString(text: string): string {
  return text.replace(/[\\"\n\r]/g, (char) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r' })[char]!);
}
