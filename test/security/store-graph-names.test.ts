// Bypass class: graph IRIs that some store gives a special meaning (Jena urn:x-arq:*, Stardog, RDF4J/Sesame nil, Virtuoso system graphs).

import { BITS, describeOnEveryStore, itAttacks, type Attack } from '../helpers/rig-stores.js';

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

describeOnEveryStore('store-specific graph names', (guard, store) => {
  itAttacks(attacks, guard, store);
});
