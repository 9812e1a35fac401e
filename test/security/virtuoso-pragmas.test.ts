// Bypass class: Virtuoso DEFINE pragmas, which add graphs to the dataset on Virtuoso (rig c10-c12); not SPARQL 1.1.

import { GRAPHS, describeOnEveryStore, itAttacks, type Attack } from '../helpers/rig-stores.js';

const P = 'PREFIX ex: <http://example.org/>\n';
const BODY = `SELECT DISTINCT ?b WHERE { { ?f ex:graphBit ?b } UNION { GRAPH ?g { ?f ex:graphBit ?b } } }`;

const attacks: Attack[] = [
  { name: 'DEFINE input:default-graph-uri', caller: 'reader', query: `DEFINE input:default-graph-uri <${GRAPHS.secret}>\n${P}${BODY}`, expect: { status: 400 } },
  { name: 'DEFINE input:named-graph-uri', caller: 'reader', query: `DEFINE input:named-graph-uri <${GRAPHS.secret}>\n${P}${BODY}`, expect: { status: 400 } },
  { name: 'DEFINE after the prologue', caller: 'reader', query: `${P}DEFINE input:default-graph-uri <${GRAPHS.secret}> ${BODY}`, expect: { status: 400 } },
  { name: 'define in lower case', caller: 'reader', query: `define input:same-as "yes"\n${P}${BODY}`, expect: { status: 400 } },
  { name: 'DEFINE sql:select-option', caller: 'reader', query: `DEFINE sql:select-option "order"\n${P}${BODY}`, expect: { status: 400 } },
  { name: 'DEFINE hidden in a comment stays a comment', caller: 'reader', query: `# DEFINE input:default-graph-uri <${GRAPHS.secret}>\n${P}SELECT DISTINCT ?b WHERE { ?f ex:graphBit ?b }`, expect: { bits: [2, 8] } },
  { name: 'DEFINE inside a string stays a string', caller: 'reader', query: `${P}SELECT DISTINCT ?b WHERE { ?f ex:graphBit ?b FILTER(?b != "DEFINE input:default-graph-uri <${GRAPHS.secret}>") }`, expect: { bits: [2, 8] } },
  // Virtuoso runs bif: built-ins (its SQL layer: bif:exec, bif:sys_stat, ...) named in a query; if
  // it runs this one, the answer holds a canary-shaped string and the leak check fires.
  { name: 'Virtuoso bif: function in an expression', caller: 'reader', query: `${P}SELECT ?b WHERE { BIND(<bif:concat>("CANARY-", "BIF") AS ?b) }`, expect: { ok: true },
    expectOn: { embedded: { storeError: true }, oxigraph: { storeError: true } },
    knownLeak: { virtuoso: 'Virtuoso executes bif: SQL built-ins; planner fix: refuse function IRIs outside SPARQL 1.1 built-ins and XSD casts (bif:, sql:, Jena java:/ARQ function namespaces)' } },
];

describeOnEveryStore('Virtuoso pragmas', (guard, store) => {
  itAttacks(attacks, guard, store);
});
