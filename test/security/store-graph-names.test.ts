// Bypass class: graph IRIs that some store gives a special meaning (Jena urn:x-arq:*, Stardog, RDF4J/Sesame nil, Virtuoso system graphs).

import { BITS, describeOnEveryStore, everyStore, itAttacks, type Attack } from '../helpers/rig-stores.js';

const P = 'PREFIX ex: <http://example.org/>\n';
/** Each special name, as FROM, FROM NAMED, GRAPH <iri> and protocol parameter. */
const SPECIAL_GRAPHS = [
  'urn:x-arq:UnionGraph',
  'urn:x-arq:DefaultGraph',
  'urn:x-arq:DefaultGraphNode',
  'urn:x-arq:NamedGraph',
  'tag:stardog:api:context:all',
  'tag:stardog:api:context:default',
  'tag:stardog:api:context:named',
  'http://rdf4j.org/schema/rdf4j#nil',
  'http://www.openrdf.org/schema/sesame#nil',
  'http://www.openlinksw.com/schemas/virtrdf#',
  'http://www.w3.org/ns/ldp#',
  'http://localhost:8890/DAV/',
  'http://127.0.0.1:7103/sparql',
  'http://127.0.0.1:7103/DAV/',
];

const attacks: Attack[] = SPECIAL_GRAPHS.flatMap((iri): Attack[] => [
  {
    name: `FROM <${iri}>`,
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b FROM <${iri}> WHERE { ?f ex:graphBit ?b }`,
    expect: { bits: [] },
  },
  {
    name: `FROM NAMED <${iri}>, GRAPH ?g`,
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b FROM NAMED <${iri}> WHERE { GRAPH ?g { ?f ex:graphBit ?b } }`,
    expect: { bits: [] },
  },
  {
    name: `GRAPH <${iri}>`,
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { GRAPH <${iri}> { ?f ex:graphBit ?b } }`,
    expect: { bits: [] },
  },
  {
    name: `GRAPH <${iri}> beside FROM <public1>`,
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b FROM <http://example.org/g/public1> WHERE { { ?f ex:graphBit ?b } UNION { GRAPH <${iri}> { ?f ex:graphBit ?b } } }`,
    expect: { bits: [BITS.public1] },
  },
  {
    name: `default-graph-uri=${iri}`,
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { ?f ex:graphBit ?b }`,
    params: { 'default-graph-uri': [iri] },
    expect: { bits: [] },
  },
  {
    name: `named-graph-uri=${iri}`,
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { GRAPH ?g { ?f ex:graphBit ?b } }`,
    params: { 'named-graph-uri': [iri] },
    expect: { bits: [] },
  },
  { name: `ASK GRAPH <${iri}> {}`, caller: 'reader', query: `ASK { GRAPH <${iri}> { } }`, expect: { ask: false } },
]);
attacks.push({
  name: 'Virtuoso system graphs stay out of GRAPH ?g',
  caller: 'reader',
  query: `SELECT DISTINCT ?b WHERE { GRAPH ?g { ?s ?p ?o } BIND(IF(STRSTARTS(STR(?g), "http://example.org/g/"), 2, 64) AS ?b) }`,
  expect: { bits: [2] },
});

/**
 * The guard's own stand-in for an empty set of named graphs (FROM NAMED <urn:x-sparql-guard:empty>): with no
 * named graph to read, GRAPH ?g has no solution, even for a body that matches without a triple. Each query binds
 * ?b = 64 on any row: found by Jena's ARQ test Dataset/graph-07 (`GRAPH ?g { }`), which answered the stand-in's IRI.
 */
const EMPTY_NAMED_BODIES = [
  '{ }',
  '{ BIND(1 AS ?x) }',
  '{ VALUES ?x { 1 } }',
  '{ OPTIONAL { ?s ?p ?o } }',
  '{ FILTER(true) }',
  '{ ex:fingerprint ex:graphBit* ?o }',
  '{ SELECT (COUNT(*) AS ?n) { ?s ?p ?o } }',
];
for (const body of EMPTY_NAMED_BODIES) {
  attacks.push(
    {
      name: `FROM <public1> and no named graph: GRAPH ?g ${body} has no solution`,
      caller: 'reader',
      query: `${P}SELECT ?b FROM <http://example.org/g/public1> WHERE { GRAPH ?g ${body} BIND(64 AS ?b) }`,
      expect: { bits: [] },
    },
    {
      name: `FROM NAMED <secret> only (not granted): GRAPH ?g ${body} has no solution`,
      caller: 'anonymous',
      query: `${P}SELECT ?b FROM NAMED <http://example.org/g/secret> WHERE { GRAPH ?g ${body} BIND(64 AS ?b) }`,
      expect: { bits: [] },
    },
    {
      name: `named-graph-uri=secret (not granted): ASK { GRAPH ?g ${body} } is false`,
      caller: 'reader',
      query: `${P}ASK { GRAPH ?g ${body} }`,
      params: { 'named-graph-uri': ['http://example.org/g/secret'] },
      expect: { ask: false },
    },
  );
}

// Every store, Jena's variants too: these are the forms they answer otherwise (rig-stores.ts, JENA_VARIANTS).
describeOnEveryStore(
  'store-specific graph names',
  (guard, store) => {
    itAttacks(attacks, guard, store);
  },
  {},
  everyStore,
);
