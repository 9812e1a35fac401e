// Bypass class: DESCRIBE, whose description each store computes its own way (Jena's embedded ARQ reads the whole dataset); the planner sends it as a CONSTRUCT.

import { GRAPHS, describeOnEveryStore, everyStore, itAttacks, type Attack } from '../helpers/rig-stores.js';

const P = 'PREFIX ex: <http://example.org/>\nPREFIX res: <http://example.org/res/>\nPREFIX sec: <http://example.org/secret/>\n';
const TURTLE = 'text/turtle';

const attacks: Attack[] = [
  {
    name: 'DESCRIBE a shared subject',
    caller: 'reader',
    accept: TURTLE,
    query: `${P}DESCRIBE res:item1`,
    expect: { ok: true },
    mustContain: 'Item 1',
  },
  {
    name: 'DESCRIBE a shared subject, anonymous',
    accept: TURTLE,
    query: `${P}DESCRIBE res:item3`,
    expect: { ok: true },
    mustContain: 'Item 3',
  },
  {
    name: 'DESCRIBE ... FROM <public1>',
    caller: 'reader',
    accept: TURTLE,
    query: `${P}DESCRIBE res:item2 FROM <${GRAPHS.public1}>`,
    expect: { ok: true },
    mustContain: 'Item 2',
  },
  {
    name: 'DESCRIBE ?s FROM <public1> WHERE',
    caller: 'reader',
    accept: TURTLE,
    query: `${P}DESCRIBE ?s FROM <${GRAPHS.public1}> WHERE { ?s ex:value 4 }`,
    expect: { ok: true },
    mustContain: 'Item 4',
  },
  {
    name: 'DESCRIBE ... FROM <secret>',
    caller: 'reader',
    accept: TURTLE,
    query: `${P}DESCRIBE res:item1 FROM <${GRAPHS.secret}>`,
    expect: { ok: true },
  },
  {
    name: 'DESCRIBE ... FROM NAMED <public1> only (named graphs searched by Jena and Virtuoso)',
    caller: 'reader',
    accept: TURTLE,
    query: `${P}DESCRIBE res:item1 FROM NAMED <${GRAPHS.public1}>`,
    expect: { ok: true },
  },
  { name: 'DESCRIBE a secret-only subject', caller: 'reader', accept: TURTLE, query: `${P}DESCRIBE sec:doc5`, expect: { ok: true } },
  {
    name: 'DESCRIBE a subject with secret blank-node closures',
    caller: 'reader',
    accept: 'application/n-triples',
    query: `${P}DESCRIBE res:item7`,
    expect: { ok: true },
    mustContain: 'Item 7',
  },
  {
    name: 'DESCRIBE with protocol default-graph-uri=<public1> and FROM <secret>',
    caller: 'reader',
    accept: TURTLE,
    query: `${P}DESCRIBE res:item5 FROM <${GRAPHS.secret}>`,
    params: { 'default-graph-uri': [GRAPHS.public1] },
    expect: { ok: true },
    mustContain: 'Item 5',
  },
  {
    // Each described variable is a branch of its own copy of the pattern: a blank node copied as written
    // was one label in two BGPs, which every store refuses (§4.1.4).
    name: 'DESCRIBE of two variables with a blank node in the pattern',
    caller: 'reader',
    accept: TURTLE,
    query: `${P}DESCRIBE ?s ?v WHERE { ?s ex:value ?v ; ?q [] FILTER(?v = 4) }`,
    expect: { ok: true },
    mustContain: 'Item 4',
  },
  {
    name: 'DESCRIBE * over GRAPH ?g',
    caller: 'reader',
    accept: TURTLE,
    query: `${P}DESCRIBE * WHERE { GRAPH ?g { ?s ex:value ?v FILTER(?v < 3) } }`,
    expect: { ok: true },
  },
  {
    name: 'DESCRIBE of a subject reached through a public link (ex:seeAlso -> secret doc)',
    caller: 'reader',
    accept: TURTLE,
    query: `${P}DESCRIBE ?d WHERE { res:item5 ex:seeAlso ?d }`,
    expect: { ok: true },
  },
  {
    name: 'DESCRIBE of the fingerprint node',
    caller: 'reader',
    accept: TURTLE,
    query: `${P}DESCRIBE ex:fingerprint`,
    expect: { ok: true },
  },
  {
    name: 'control: the keeper may describe the secret subject',
    caller: 'keeper',
    accept: TURTLE,
    query: `${P}DESCRIBE res:item1`,
    expect: { ok: true },
    mustContain: 'CANARY-SECRET',
  },
];

// Every store, Jena's variants too: these are the forms they answer otherwise (rig-stores.ts, JENA_VARIANTS).
describeOnEveryStore(
  'DESCRIBE',
  (guard, store) => {
    itAttacks(attacks, guard, store);
  },
  {},
  everyStore,
);
