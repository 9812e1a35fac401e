// Bypass class: SERVICE in every position (Jena executes SERVICE to the store's own endpoint).

import { describeOnEveryStore, itAttacks, type Attack } from '../helpers/rig-stores.js';

const P = 'PREFIX ex: <http://example.org/>\n';
const SELF = ['http://127.0.0.1:7101/query', 'http://127.0.0.1:7102/ds/query', 'http://127.0.0.1:7103/sparql'];
const inner = (endpoint: string, silent = '') => `SERVICE ${silent}<${endpoint}> { GRAPH ?g { ?f ex:graphBit ?b } }`;

const positions: readonly [string, (service: string) => string][] = [
  ['top level', (s) => `SELECT ?b WHERE { ${s} }`],
  ['in OPTIONAL', (s) => `SELECT ?b WHERE { ?x ?y ?z OPTIONAL { ${s} } }`],
  ['in UNION', (s) => `SELECT ?b WHERE { { ?x ?y ?z } UNION { ${s} } }`],
  ['in MINUS', (s) => `SELECT ?b WHERE { ?x ?y ?z MINUS { ${s} } }`],
  ['in FILTER EXISTS', (s) => `SELECT ?b WHERE { ?x ?y ?z FILTER EXISTS { ${s} } }`],
  ['in FILTER NOT EXISTS', (s) => `ASK { FILTER NOT EXISTS { ${s} } }`],
  ['in a sub-select', (s) => `SELECT ?b WHERE { { SELECT ?b WHERE { ${s} } } }`],
  ['in GRAPH', (s) => `SELECT ?b WHERE { GRAPH ?h { ${s} } }`],
  ['in a CONSTRUCT', (s) => `CONSTRUCT { ?f ex:graphBit ?b } WHERE { ${s} }`],
  ['in DESCRIBE', (s) => `DESCRIBE ?f WHERE { ${s} }`],
  ['in ASK', (s) => `ASK { ${s} }`],
  ['in a BIND-ed EXISTS', (s) => `SELECT ?b WHERE { BIND(EXISTS { ${s} } AS ?b) }`],
  ['in a HAVING EXISTS', (s) => `SELECT (COUNT(*) AS ?b) WHERE { ?x ?y ?z } HAVING (EXISTS { ${s} })`],
  ['in an ORDER BY EXISTS', (s) => `SELECT ?z WHERE { ?x ?y ?z } ORDER BY (EXISTS { ${s} })`],
];

const attacks: Attack[] = [
  ...positions.flatMap(([where, build]): Attack[] =>
    SELF.map((endpoint) => ({
      name: `SERVICE ${where} to ${endpoint}`,
      caller: 'reader',
      query: P + build(inner(endpoint)),
      expect: { status: 403 },
    })),
  ),
  { name: 'SERVICE SILENT', caller: 'reader', query: P + `SELECT ?b WHERE { ${inner(SELF[1]!, 'SILENT ')} }`, expect: { status: 403 } },
  {
    name: 'SERVICE with a variable endpoint bound by VALUES',
    caller: 'reader',
    query: P + `SELECT ?b WHERE { VALUES ?e { <${SELF[1]}> } SERVICE ?e { ?f ex:graphBit ?b } }`,
    expect: { status: 403 },
  },
  {
    name: 'service in lower case',
    caller: 'reader',
    query: P + `SELECT ?b WHERE { service <${SELF[1]}> { ?f ex:graphBit ?b } }`,
    expect: { status: 403 },
  },
  // Oxigraph's test ask_join_error_left. Sent to the lab's Virtuoso 7.2.5 directly, it ends the
  // Virtuoso process (every later query: connection refused); through the guard it never reaches it.
  {
    name: 'SERVICE to a variable beside an empty VALUES',
    caller: 'reader',
    query: 'ASK { SERVICE ?1 {} VALUES () {} }',
    expect: { status: 403 },
  },
  // SPARQL 1.1 section 19.2: escapes are decoded before parsing, so this is SERVICE.
  {
    name: 'SERVICE spelled with a \\u escape',
    caller: 'reader',
    query: P + `SELECT ?b WHERE { \\u0053ERVICE <${SELF[1]}> { ?f ex:graphBit ?b } }`,
    expect: { status: 403 },
  },
];

describeOnEveryStore('SERVICE', (guard, store) => {
  itAttacks(attacks, guard, store);
});
