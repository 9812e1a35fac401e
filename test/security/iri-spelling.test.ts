// Bypass class: spelling a forbidden graph differently. \u escapes, prefixed names, BASE and relative IRIs with dot segments.

import { BITS, describeOnEveryStore, itAttacks, type Attack } from '../helpers/rig-stores.js';

const P = 'PREFIX ex: <http://example.org/>\n';
const bitsFrom = (dataset: string, named = false) =>
  `${P}SELECT DISTINCT ?b ${dataset} WHERE { ${named ? 'GRAPH ?g { ?f ex:graphBit ?b }' : '?f ex:graphBit ?b'} }`;

const attacks: Attack[] = [
  // Oxigraph and Jena decode \u inside IRIs: the guard must compare the decoded IRI.
  { name: '\\u escape in FROM', caller: 'reader', query: bitsFrom('FROM <http://example.org/g/\\u0073ecret>'), expect: { bits: [] } },
  {
    name: '\\U escape in FROM NAMED',
    caller: 'reader',
    query: bitsFrom('FROM NAMED <http://example.org/g/\\U00000073ecret>', true),
    expect: { bits: [] },
  },
  {
    name: '\\u escape in GRAPH',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { GRAPH <http://example.org/g/\\u0073ecret> { ?f ex:graphBit ?b } }`,
    expect: { bits: [] },
  },
  {
    name: '\\u escape of a granted graph still names it',
    caller: 'reader',
    query: bitsFrom('FROM <http://example.org/g/te\\u0061mA>'),
    expect: { bits: [BITS.teamA] },
  },
  {
    name: '\\u escape spelling the closing bracket',
    caller: 'reader',
    query: bitsFrom('FROM <http://example.org/g/public1\\u003E FROM <http://example.org/g/secret>'),
    expect: { status: 400 },
  },
  // Decoded first (section 19.2), the quote would end the string and the FROM would count: refused.
  {
    name: '\\u escape of a quote inside a string',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { ?f ex:graphBit ?b FILTER(?b != "x\\u0022) } } FROM <http://example.org/g/secret> WHERE { #") }`,
    expect: { status: 400 },
  },
  {
    name: 'prefixed name for a forbidden graph',
    caller: 'reader',
    query: `PREFIX g: <http://example.org/g/>\n${bitsFrom('FROM g:secret')}`,
    expect: { bits: [] },
  },
  {
    name: 'prefixed name with an escaped local part',
    caller: 'reader',
    query: `PREFIX g: <http://example.org/g/>\n${bitsFrom('FROM g:sec\\-ret')}`,
    expect: { bits: [] },
  },
  {
    name: 'BASE and a relative FROM',
    caller: 'reader',
    query: `BASE <http://example.org/g/>\n${bitsFrom('FROM <secret>')}`,
    expect: { bits: [] },
  },
  {
    name: 'BASE and a relative granted FROM',
    caller: 'reader',
    query: `BASE <http://example.org/g/>\n${bitsFrom('FROM <teamA>')}`,
    expect: { bits: [BITS.teamA] },
  },
  {
    name: 'dot segments: public1/../secret',
    caller: 'reader',
    query: bitsFrom('FROM <http://example.org/g/public1/../secret>'),
    expect: { bits: [] },
  },
  // Absolute IRIs are compared byte for byte (§4.1.1): this is not the granted teamA, so it is dropped.
  {
    name: 'dot segments are another IRI, also when they normalise to a granted graph: secret/../teamA',
    caller: 'reader',
    query: bitsFrom('FROM <http://example.org/g/secret/../teamA>'),
    expect: { bits: [] },
  },
  {
    name: 'dot segments in a granted-looking GRAPH IRI match nothing: teamA/../teamA',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { GRAPH <http://example.org/g/teamA/../teamA> { ?f ex:graphBit ?b } }`,
    expect: { bits: [] },
  },
  {
    name: 'dot segments in GRAPH: ./secret',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { GRAPH <http://example.org/g/./secret> { ?f ex:graphBit ?b } }`,
    expect: { bits: [] },
  },
  {
    name: 'BASE with dot segments and relative ../g/secret',
    caller: 'reader',
    query: `BASE <http://example.org/x/y/>\n${bitsFrom('FROM <../../g/secret>')}`,
    expect: { bits: [] },
  },
  {
    name: 'two BASE declarations',
    caller: 'reader',
    query: `BASE <http://example.org/other/>\nBASE <http://example.org/g/>\n${bitsFrom('FROM <secret> FROM <public1>')}`,
    expect: { bits: [BITS.public1] },
  },
  {
    name: 'relative FROM without BASE resolves against baseIri, not a graph',
    caller: 'reader',
    query: bitsFrom('FROM <secret>'),
    expect: { bits: [] },
  },
  {
    name: 'percent-encoded IRI is another IRI',
    caller: 'reader',
    query: bitsFrom('FROM <http://example.org/g/%73ecret>'),
    expect: { bits: [] },
  },
  { name: 'upper-case scheme and host', caller: 'reader', query: bitsFrom('FROM <HTTP://EXAMPLE.ORG/g/secret>'), expect: { bits: [] } },
  {
    name: 'protocol IRI with dot segments',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { ?f ex:graphBit ?b }`,
    params: { 'default-graph-uri': ['http://example.org/g/public1/../secret'] },
    expect: { bits: [] },
  },
  {
    name: 'relative protocol IRI',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { ?f ex:graphBit ?b }`,
    params: { 'default-graph-uri': ['secret'] },
    expect: { status: 400 },
  },
  // SPARQL's IRIREF lets C1 controls through, RFC 3987 does not (docs/design/sparql.md#iris): a store that drops them would read the secret graph.
  {
    name: 'C1 control inside a FROM IRI',
    caller: 'reader',
    query: bitsFrom('FROM <http://example.org/g/sec\u{85}ret>'),
    expect: { status: 400 },
  },
  {
    name: 'C1 control as a codepoint escape in GRAPH',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { GRAPH <http://example.org/g/sec\\u0085ret> { ?f ex:graphBit ?b } }`,
    expect: { status: 400 },
  },
  {
    name: 'C1 control in a protocol IRI',
    caller: 'reader',
    query: `${P}SELECT DISTINCT ?b WHERE { ?f ex:graphBit ?b }`,
    params: { 'default-graph-uri': ['http://example.org/g/sec\u{85}ret'] },
    expect: { status: 400 },
  },
];

describeOnEveryStore('IRI spelling', (guard, store) => {
  itAttacks(attacks, guard, store);
});
