// Bypass class: naming graphs inside the pattern. GRAPH ?g, GRAPH <iri>, VALUES / BIND of graph IRIs, graph IRIs in expressions.

import { BITS, GRAPHS, describeOnEveryStore, everyStore, itAttacks, type Attack } from '../helpers/rig-stores.js';

const P = 'PREFIX ex: <http://example.org/>\n';
const inGraph = (graph: string) => `${P}SELECT DISTINCT ?b WHERE { GRAPH ${graph} { ex:fingerprint ex:graphBit ?b } }`;

const attacks: Attack[] = [
  { name: 'GRAPH ?g lists granted graphs only', caller: 'reader', query: inGraph('?g'), expect: { bits: [BITS.public1, BITS.teamA] } },
  {
    // A path of variable length under GRAPH ?g is written once per granted graph: the blank node beside it takes a
    // label per branch (§4.1.4). (Virtuoso refuses a blank node as the subject of the path itself.)
    name: 'GRAPH ?g over a blank node and a path of variable length',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { GRAPH ?g { ?f ex:graphBit+ ?b . [] ex:graphBit ?b } }`,
    expect: { bits: [BITS.public1, BITS.teamA] },
  },
  { name: 'GRAPH <secret>', caller: 'reader', query: inGraph(`<${GRAPHS.secret}>`), expect: { bits: [] } },
  { name: 'GRAPH <teamA> as anonymous', query: inGraph(`<${GRAPHS.teamA}>`), expect: { bits: [] } },
  { name: 'GRAPH <teamA> as reader', caller: 'reader', query: inGraph(`<${GRAPHS.teamA}>`), expect: { bits: [BITS.teamA] } },
  { name: "GRAPH of Virtuoso's default graph name", caller: 'reader', query: inGraph(`<${GRAPHS.virtuosoDefault}>`), expect: { bits: [] } },
  {
    name: 'GRAPH <secret> with an empty group: ASK false (Virtuoso answers one empty solution)',
    caller: 'reader',
    query: `ASK { GRAPH <${GRAPHS.secret}> { } }`,
    expect: { ask: false },
  },
  {
    name: 'GRAPH <secret> {} under FILTER(false) in EXISTS',
    caller: 'reader',
    query: `ASK { FILTER EXISTS { GRAPH <${GRAPHS.secret}> { } } }`,
    expect: { ask: false },
    // Not a leak (the answer does not depend on the secret graph): Virtuoso finds a solution in EXISTS { VALUES () {} }.
    expectOn: { virtuoso: { ask: true } },
  },
  // A GRAPH <iri> outside the dataset matches nothing, and an aggregate over nothing is one row (COUNT 0, here 2 + 0).
  {
    name: 'COUNT(*) over GRAPH <secret>: one row, 0',
    caller: 'reader',
    query: `SELECT ((COUNT(*) + 2) AS ?b) WHERE { GRAPH <${GRAPHS.secret}> { ?s ?p ?o } }`,
    expect: { bits: [BITS.public1] },
  },
  {
    name: 'COUNT(*) over GRAPH <secret> joined with a visible triple: one row, 0',
    caller: 'reader',
    query: `${P}SELECT ((COUNT(*) + 2) AS ?b) WHERE { ex:fingerprint ex:graphBit ?x GRAPH <${GRAPHS.secret}> { ?s ?p ?o } }`,
    expect: { bits: [BITS.public1] },
  },
  {
    name: 'GRAPH <public2> nested inside GRAPH <public1>',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { GRAPH <${GRAPHS.public1}> { GRAPH <${GRAPHS.public2}> { ex:fingerprint ex:graphBit ?b } } }`,
    expect: { bits: [] },
  },
  {
    name: 'VALUES ?g { <secret> } then GRAPH ?g',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { VALUES ?g { <${GRAPHS.secret}> <${GRAPHS.teamB}> } GRAPH ?g { ex:fingerprint ex:graphBit ?b } }`,
    expect: { bits: [] },
  },
  {
    name: 'GRAPH ?g then VALUES ?g { <secret> <teamA> }',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { GRAPH ?g { ex:fingerprint ex:graphBit ?b } VALUES ?g { <${GRAPHS.secret}> <${GRAPHS.teamA}> } }`,
    expect: { bits: [BITS.teamA] },
  },
  {
    name: 'trailing VALUES ?g { <secret> }',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { GRAPH ?g { ex:fingerprint ex:graphBit ?b } } VALUES ?g { <${GRAPHS.secret}> }`,
    expect: { bits: [] },
    // Virtuoso bug: "SQ200: No column g" for a trailing VALUES over a GRAPH variable.
    expectOn: { virtuoso: { storeError: true } },
  },
  {
    name: 'BIND(<secret> AS ?g) then GRAPH ?g',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { BIND(<${GRAPHS.secret}> AS ?g) GRAPH ?g { ex:fingerprint ex:graphBit ?b } }`,
    expect: { bits: [] },
  },
  {
    name: 'BIND(IRI(CONCAT(...)) AS ?g) then GRAPH ?g',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { BIND(IRI(CONCAT("http://example.org/g/", "sec", "ret")) AS ?g) GRAPH ?g { ex:fingerprint ex:graphBit ?b } }`,
    expect: { bits: [] },
  },
  {
    name: 'FILTER(?g = <secret>) over GRAPH ?g',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { GRAPH ?g { ex:fingerprint ex:graphBit ?b } FILTER(?g = <${GRAPHS.secret}> || ?g = <${GRAPHS.public1}>) }`,
    expect: { bits: [BITS.public1] },
  },
  {
    name: 'sub-select projecting ?g into GRAPH ?g',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { { SELECT ?g WHERE { VALUES ?g { <${GRAPHS.secret}> } } } GRAPH ?g { ex:fingerprint ex:graphBit ?b } }`,
    expect: { bits: [] },
  },
  {
    name: 'GRAPH ?g listing graph names',
    caller: 'reader',
    query: `SELECT DISTINCT ?b WHERE { GRAPH ?g { } BIND(IF(CONTAINS(STR(?g), "secret"), 32, IF(CONTAINS(STR(?g), "teamB"), 16, IF(CONTAINS(STR(?g), "public2"), 4, IF(CONTAINS(STR(?g), "teamA"), 8, 2)))) AS ?b) }`,
    expect: { bits: [BITS.public1, BITS.teamA] },
    // Virtuoso matches no graph for an empty group inside GRAPH ?g: fewer answers, nothing leaked.
    expectOn: { virtuoso: { bits: [] } },
  },
  {
    name: 'property path inside GRAPH <secret>',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { GRAPH <${GRAPHS.secret}> { ex:fingerprint ex:graphBit/^ex:graphBit/ex:graphBit ?b } }`,
    expect: { bits: [] },
  },
  {
    name: 'GRAPH <secret> in a CONSTRUCT',
    caller: 'reader',
    accept: 'application/n-triples',
    query: `${P}CONSTRUCT { ?s ?p ?o } WHERE { GRAPH <${GRAPHS.secret}> { ?s ?p ?o } }`,
    expect: { ok: true },
  },
];

// Every store, Jena's variants too: these are the forms they answer otherwise (rig-stores.ts, JENA_VARIANTS).
describeOnEveryStore(
  'graph patterns',
  (guard, store) => {
    itAttacks(attacks, guard, store);
  },
  {},
  everyStore,
);

// Each store above gets the form of the default, datasetForm "auto": graph filters on Virtuoso, the clauses elsewhere.
// The other form here: graph filters on the embedded store (no dataset clause for the store to honour; a pattern the
// form left unheld reads every graph), and the clauses on Virtuoso, where the config may still fix them.
describeOnEveryStore(
  'graph patterns, datasetForm graph-filters',
  (guard, store) => {
    itAttacks(attacks, guard, store);
  },
  { datasetForm: 'graph-filters' },
  ({ name }) => name === 'embedded',
);
describeOnEveryStore(
  'graph patterns, datasetForm clauses',
  (guard, store) => {
    itAttacks(attacks, guard, store);
  },
  { datasetForm: 'clauses' },
  ({ name }) => name === 'virtuoso',
);
