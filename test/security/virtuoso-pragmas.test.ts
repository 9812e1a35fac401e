// Bypass class: Virtuoso DEFINE pragmas, which add graphs to the dataset on Virtuoso, and store extension functions; not SPARQL 1.1.

import { GRAPHS, describeOnEveryStore, itAttacks, type Attack } from '../helpers/rig-stores.js';

const P = 'PREFIX ex: <http://example.org/>\n';
const BODY = `SELECT DISTINCT ?b WHERE { { ?f ex:graphBit ?b } UNION { GRAPH ?g { ?f ex:graphBit ?b } } }`;

const attacks: Attack[] = [
  {
    name: 'DEFINE input:default-graph-uri',
    caller: 'reader',
    query: `DEFINE input:default-graph-uri <${GRAPHS.secret}>\n${P}${BODY}`,
    expect: { status: 400 },
  },
  {
    name: 'DEFINE input:named-graph-uri',
    caller: 'reader',
    query: `DEFINE input:named-graph-uri <${GRAPHS.secret}>\n${P}${BODY}`,
    expect: { status: 400 },
  },
  {
    name: 'DEFINE after the prologue',
    caller: 'reader',
    query: `${P}DEFINE input:default-graph-uri <${GRAPHS.secret}> ${BODY}`,
    expect: { status: 400 },
  },
  { name: 'define in lower case', caller: 'reader', query: `define input:same-as "yes"\n${P}${BODY}`, expect: { status: 400 } },
  { name: 'DEFINE sql:select-option', caller: 'reader', query: `DEFINE sql:select-option "order"\n${P}${BODY}`, expect: { status: 400 } },
  {
    name: 'DEFINE hidden in a comment stays a comment',
    caller: 'reader',
    query: `# DEFINE input:default-graph-uri <${GRAPHS.secret}>\n${P}SELECT DISTINCT ?b WHERE { ?f ex:graphBit ?b }`,
    expect: { bits: [2, 8] },
  },
  {
    name: 'DEFINE inside a string stays a string',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { ?f ex:graphBit ?b FILTER(?b != "DEFINE input:default-graph-uri <${GRAPHS.secret}>") }`,
    expect: { bits: [2, 8] },
  },
  // Virtuoso runs bif: built-ins (its SQL layer: bif:exec, bif:sys_stat, ...) and sql: procedures named in
  // a query, Jena ARQ property functions and java: classes: the guard refuses every function IRI but the
  // XSD casts, and known property-function namespaces as predicates (test/stores shows each runs directly).
  {
    name: 'Virtuoso bif: function in an expression',
    caller: 'reader',
    query: `${P}SELECT ?b WHERE { BIND(<bif:concat>("CANARY-", "BIF") AS ?b) }`,
    expect: { status: 400 },
  },
  {
    name: 'Virtuoso sql: procedure call',
    caller: 'reader',
    query: `${P}SELECT ?b WHERE { BIND(<sql:getUser>() AS ?b) }`,
    expect: { status: 400 },
  },
  {
    name: 'Virtuoso bif:contains free-text predicate',
    caller: 'reader',
    query: `${P}SELECT ?b WHERE { ?f ex:graphBit ?b . ?b <bif:contains> "CANARY" }`,
    expect: { status: 400 },
  },
  {
    name: 'Jena ARQ property function apf:concat',
    caller: 'reader',
    query: `${P}SELECT ?b WHERE { ?b <http://jena.apache.org/ARQ/property#concat> ("CANARY-" "APF") }`,
    expect: { status: 400 },
  },
  {
    name: 'Jena java: function class',
    caller: 'reader',
    query: `${P}SELECT ?b WHERE { BIND(<java:org.apache.jena.sparql.function.library.strjoin>("", "CANARY-", "JAVA") AS ?b) }`,
    expect: { status: 400 },
  },
  {
    name: 'an XSD cast is still a function a query may call',
    caller: 'reader',
    query: `${P}PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\nSELECT DISTINCT ?b WHERE { ?f ex:graphBit ?b FILTER(xsd:integer(?b) > 0) }`,
    expect: { bits: [2, 8] },
  },
];

describeOnEveryStore('Virtuoso pragmas', (guard, store) => {
  itAttacks(attacks, guard, store);
});
