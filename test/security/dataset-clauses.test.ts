// Bypass class: the dataset. Forbidden FROM / FROM NAMED, FROM inside a sub-select, protocol dataset parameters alone and with the query's own.

import { BITS, GRAPHS, describeOnEveryStore, everyStore, itAttacks, type Attack } from '../helpers/rig-stores.js';

const P = 'PREFIX ex: <http://example.org/>\n';
const DEFAULT_BITS = `${P}SELECT DISTINCT ?b WHERE { ex:fingerprint ex:graphBit ?b }`;
const NAMED_BITS = `${P}SELECT DISTINCT ?b WHERE { GRAPH ?g { ex:fingerprint ex:graphBit ?b } }`;
const withDataset = (dataset: string, named = false) =>
  `${P}SELECT DISTINCT ?b ${dataset} WHERE { ${named ? 'GRAPH ?g { ex:fingerprint ex:graphBit ?b }' : 'ex:fingerprint ex:graphBit ?b'} }`;

const attacks: Attack[] = [
  {
    name: 'baseline: no dataset clause sees every granted graph as default graph',
    caller: 'reader',
    query: DEFAULT_BITS,
    expect: { bits: [BITS.public1, BITS.teamA] },
  },
  {
    name: 'baseline: GRAPH ?g sees every granted graph',
    caller: 'reader',
    query: NAMED_BITS,
    expect: { bits: [BITS.public1, BITS.teamA] },
  },
  { name: 'baseline: anonymous sees public1 only', query: DEFAULT_BITS, expect: { bits: [BITS.public1] } },
  {
    name: 'control: the keeper, granted secret, does see it (canaries are there to find)',
    caller: 'keeper',
    query: withDataset(`FROM <${GRAPHS.secret}>`),
    expect: { bits: [BITS.secret] },
  },
  { name: 'FROM <secret>', caller: 'reader', query: withDataset(`FROM <${GRAPHS.secret}>`), expect: { bits: [] } },
  {
    name: 'FROM <secret> FROM <public1>',
    caller: 'reader',
    query: withDataset(`FROM <${GRAPHS.secret}> FROM <${GRAPHS.public1}>`),
    expect: { bits: [BITS.public1] },
  },
  { name: 'FROM <teamA> as anonymous', query: withDataset(`FROM <${GRAPHS.teamA}>`), expect: { bits: [] } },
  {
    name: 'FROM NAMED <secret>, GRAPH ?g',
    caller: 'reader',
    query: withDataset(`FROM NAMED <${GRAPHS.secret}>`, true),
    expect: { bits: [] },
  },
  {
    name: 'FROM NAMED <secret> FROM NAMED <teamA>, GRAPH ?g',
    caller: 'reader',
    query: withDataset(`FROM NAMED <${GRAPHS.secret}> FROM NAMED <${GRAPHS.teamA}>`, true),
    expect: { bits: [BITS.teamA] },
  },
  // Virtuoso leaves GRAPH ?g unrestricted under FROM without FROM NAMED.
  {
    name: 'FROM <public1> only, then GRAPH ?g',
    caller: 'reader',
    query: withDataset(`FROM <${GRAPHS.public1}>`, true),
    expect: { bits: [] },
  },
  {
    name: 'FROM NAMED only, pattern in the default graph',
    caller: 'reader',
    query: withDataset(`FROM NAMED <${GRAPHS.public1}>`),
    expect: { bits: [] },
  },
  {
    name: "FROM Virtuoso's default graph name",
    caller: 'reader',
    query: withDataset(`FROM <${GRAPHS.virtuosoDefault}>`),
    expect: { bits: [] },
  },
  {
    name: 'FROM the reserved empty graph',
    caller: 'reader',
    query: withDataset('FROM <urn:x-sparql-guard:empty> FROM NAMED <urn:x-sparql-guard:empty>', true),
    expect: { bits: [] },
  },
  {
    name: 'FROM inside a sub-select (Virtuoso applies it)',
    caller: 'reader',
    query: `${P}SELECT ?b WHERE { { SELECT ?b FROM <${GRAPHS.secret}> WHERE { ex:fingerprint ex:graphBit ?b } } }`,
    expect: { status: 400 },
  },
  {
    name: 'FROM NAMED inside a sub-select in EXISTS',
    caller: 'reader',
    query: `${P}ASK { FILTER EXISTS { SELECT ?b FROM NAMED <${GRAPHS.secret}> WHERE { GRAPH ?g { ?s ex:graphBit ?b } } } }`,
    expect: { status: 400 },
  },
  {
    name: 'protocol default-graph-uri=<secret> alone',
    caller: 'reader',
    query: DEFAULT_BITS,
    params: { 'default-graph-uri': [GRAPHS.secret] },
    expect: { bits: [] },
  },
  {
    name: 'protocol named-graph-uri=<secret> alone',
    caller: 'reader',
    query: NAMED_BITS,
    params: { 'named-graph-uri': [GRAPHS.secret] },
    expect: { bits: [] },
  },
  {
    name: 'protocol default-graph-uri=<secret> and <public1>',
    caller: 'reader',
    query: DEFAULT_BITS,
    params: { 'default-graph-uri': [GRAPHS.secret, GRAPHS.public1] },
    expect: { bits: [BITS.public1] },
  },
  // Virtuoso merges the protocol dataset with the query's own.
  {
    name: 'protocol default-graph-uri=<public1> with query FROM <secret>',
    caller: 'reader',
    query: withDataset(`FROM <${GRAPHS.secret}>`),
    params: { 'default-graph-uri': [GRAPHS.public1] },
    expect: { bits: [BITS.public1] },
  },
  {
    name: 'protocol default-graph-uri=<public1> with query FROM NAMED <secret>, GRAPH ?g',
    caller: 'reader',
    query: withDataset(`FROM NAMED <${GRAPHS.secret}>`, true),
    params: { 'default-graph-uri': [GRAPHS.public1] },
    expect: { bits: [] },
  },
  {
    name: 'protocol named-graph-uri=<teamA> with query FROM NAMED <secret>',
    caller: 'reader',
    query: withDataset(`FROM NAMED <${GRAPHS.secret}>`, true),
    params: { 'named-graph-uri': [GRAPHS.teamA] },
    expect: { bits: [BITS.teamA] },
  },
  {
    name: 'protocol named-graph-uri=<secret> with query FROM <teamA>',
    caller: 'reader',
    query: withDataset(`FROM <${GRAPHS.teamA}>`),
    params: { 'named-graph-uri': [GRAPHS.secret] },
    expect: { bits: [] },
  },
  {
    name: 'protocol dataset in the URL of a direct POST, query FROM <secret>',
    caller: 'reader',
    method: 'direct',
    query: withDataset(`FROM <${GRAPHS.secret}>`),
    params: { 'default-graph-uri': [GRAPHS.teamA] },
    expect: { bits: [BITS.teamA] },
  },
  {
    name: 'protocol dataset by GET, query FROM NAMED <secret>',
    caller: 'reader',
    method: 'get',
    query: withDataset(`FROM NAMED <${GRAPHS.secret}>`, true),
    params: { 'named-graph-uri': [GRAPHS.public1] },
    expect: { bits: [BITS.public1] },
  },
  // An empty value is ignored by Jena and Virtuoso: the query's FROM <secret> would apply there.
  {
    name: 'empty default-graph-uri with query FROM <secret>',
    caller: 'reader',
    query: withDataset(`FROM <${GRAPHS.secret}>`),
    params: { 'default-graph-uri': [''] },
    expect: { status: 400 },
  },
  {
    name: 'default-graph-uri=urn:x-arq:UnionGraph',
    caller: 'reader',
    query: DEFAULT_BITS,
    params: { 'default-graph-uri': ['urn:x-arq:UnionGraph'] },
    expect: { bits: [] },
  },
  {
    name: 'unknown parameter union-default-graph is not forwarded',
    caller: 'reader',
    query: withDataset(`FROM <${GRAPHS.public1}>`),
    params: { 'union-default-graph': [''] },
    expect: { bits: [BITS.public1] },
  },
];

// Every store, Jena's variants too: these are the forms they answer otherwise (rig-stores.ts, JENA_VARIANTS).
describeOnEveryStore(
  'dataset clauses',
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
  'dataset clauses, datasetForm graph-filters',
  (guard, store) => {
    itAttacks(attacks, guard, store);
  },
  { datasetForm: 'graph-filters' },
  ({ name }) => name === 'embedded',
);
describeOnEveryStore(
  'dataset clauses, datasetForm clauses',
  (guard, store) => {
    itAttacks(attacks, guard, store);
  },
  { datasetForm: 'clauses' },
  ({ name }) => name === 'virtuoso',
);
