// The rows shapes oracle's queries: the SPARQL shapes the random corpus (redaction-oracle.ts) never draws, over the rows
// vocabulary. Paths crossing from an admitted record into one not admitted and back, ends bound, unbound or equal,
// nested and filtered OPTIONALs, EXISTS inside an OPTIONAL's filter, BIND then join, VALUES with terms outside any view,
// sub-selects with ORDER BY, LIMIT, OFFSET, DISTINCT and REDUCED, COUNT(DISTINCT *), SAMPLE, GROUP_CONCAT, HAVING,
// ordered and sliced answers, and a dataset given by the protocol's default-graph-uri and named-graph-uri.

/** One drawn query: its text, and the protocol's dataset parameters sent with it (none, or graph names). */
export interface ShapeQuery {
  readonly query: string;
  readonly defaultGraphs: readonly string[];
  readonly namedGraphs: readonly string[];
}

/** Constants inside and outside the callers' views: records of either graph, people, a blank node, literals, an IRI in no graph. */
const SUBJECTS = ['ex:p1', 'ex:p2', 'ex:p3', 'ex:r1', 'ex:r2', 'ex:alice', 'ex:bob', 'ex:carol', 'ex:d1', 'ex:d2'];
const OBJECTS = [...SUBJECTS, '"Apollo"', '100', '"team-a"', '"team-b"', '"Carol"@en', '"north"', 'ex:Project', 'ex:PublicRecord'];
const VARIABLES = ['?a', '?b', '?c'];
/** Names a row rule or the guard's own checks use (?this, ?agent, ?group): the caller's own variables of those names. */
const RULE_NAMES = ['?this', '?agent', '?group', '?claim_region', '?row_s'];
const COLUMNS = [
  'ex:name',
  'ex:budget',
  'ex:team',
  'ex:region',
  'ex:lead',
  'ex:note',
  'ex:text',
  'ex:salary',
  'ex:email',
  'a',
  'ex:member',
];

/** Paths that step from one record into another (lead, note shared by two projects, their inverses) and back. */
const PATHS: readonly (() => string)[] = [
  () => 'ex:lead/ex:name',
  () => 'ex:lead/ex:salary',
  () => '^ex:lead/ex:name',
  () => 'ex:note/^ex:note',
  () => 'ex:note/^ex:note/ex:name',
  () => 'ex:note/ex:team',
  () => '(ex:lead|ex:note)/ex:team',
  () => 'ex:lead/^ex:lead',
  () => '(ex:lead/^ex:lead)+',
  () => 'ex:lead*',
  () => 'ex:lead+',
  () => 'ex:lead?',
  () => '^ex:lead*',
  () => '(ex:note|^ex:note)*',
  () => '!(ex:name|^ex:lead)',
  () => '!a',
  () => '!(a|ex:salary)',
  () => '(ex:name|ex:salary)',
  () => '^(ex:team|ex:name)',
  () => 'ex:team/^ex:team',
  () => 'a/^a',
];

/** A seeded query over the rows vocabulary, of a shape the random corpus does not draw. */
export function rowShapeQuery(random: () => number, graphs: readonly string[]): ShapeQuery {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const variable = (): string => pick(VARIABLES);
  const subject = (): string => (random() < 0.7 ? variable() : pick(SUBJECTS));
  const object = (): string => (random() < 0.6 ? variable() : pick(OBJECTS));
  const plain = (): string => `${subject()} ${random() < 0.25 ? '?p' : pick(COLUMNS)} ${object()} .`;
  const path = (): string => {
    const ends = pick([
      () => [variable(), variable()],
      () => {
        const same = variable();
        return [same, same];
      },
      () => [pick(SUBJECTS), variable()],
      () => [variable(), pick(SUBJECTS)],
      () => [pick(SUBJECTS), pick(SUBJECTS)],
      () => ['[]', variable()],
      () => [pick(['"Apollo"', '100', '"team-a"', '"Carol"@en']), variable()],
      () => [variable(), pick(['"Apollo"', '"team-b"', '9000'])],
    ])();
    return `${ends[0]} ${pick(PATHS)()} ${ends[1]} .`;
  };
  const triple = (): string => (random() < 0.4 ? path() : plain());
  const values = (): string => {
    const terms = [...SUBJECTS, 'ex:nowhere', 'UNDEF', '"Apollo"'];
    return pick([
      () => `VALUES ?a { ${terms.filter(() => random() < 0.4).join(' ') || 'ex:p1'} }`,
      () => `VALUES (?a ?b) { (ex:p1 "Apollo") (ex:p2 UNDEF) (UNDEF "Borealis") (ex:alice 9000) (ex:nowhere ex:p1) }`,
    ])();
  };
  const element = (): string =>
    pick([
      triple,
      triple,
      () => `OPTIONAL { ${triple()} }`,
      () => `OPTIONAL { ${triple()} FILTER(?c != ?a) }`,
      () => `OPTIONAL { ${triple()} OPTIONAL { ${triple()} } }`,
      () => `OPTIONAL { ?c ${pick(COLUMNS)} ?b FILTER EXISTS { ?a ${pick(COLUMNS)} ?c } }`,
      () => `FILTER EXISTS { ${triple()} }`,
      () => `FILTER NOT EXISTS { ${triple()} }`,
      () => `FILTER(EXISTS { ?a ex:salary ?x } || !BOUND(?b))`,
      () => `MINUS { ${triple()} }`,
      () => `MINUS { ?a ?p ?x FILTER(?p = ex:salary) }`,
      () => `BIND(?a AS ?c) ${triple()}`,
      () => `BIND(IRI(CONCAT(STR(ex:), "p", "2")) AS ?c) ?c ${pick(COLUMNS)} ?b .`,
      values,
      () => `GRAPH ?g { ${triple()} }`,
      () => `GRAPH ?g { ${plain()} ${plain()} }`,
      () => `GRAPH <${pick(graphs)}> { ${triple()} }`,
      () => `{ ${triple()} } UNION { GRAPH ?g { ${triple()} } }`,
      () => `{ SELECT DISTINCT ?a WHERE { ${triple()} FILTER(isIRI(?a)) } ORDER BY DESC(?a) LIMIT 2 OFFSET 1 }`,
      () => `{ SELECT ?a (COUNT(DISTINCT ?b) AS ?n) WHERE { ${triple()} } GROUP BY ?a HAVING(COUNT(*) > 1) }`,
      () => `{ SELECT REDUCED ?a ?b WHERE { ${triple()} } }`,
      () => `{ SELECT ?a WHERE { { SELECT ?a ?b WHERE { ${triple()} } } ${triple()} } }`,
      () => `FILTER(?a = ?b || sameTerm(?a, ex:p1))`,
      // EXISTS inside expressions other than a FILTER's: BIND, IF, a projection (below).
      () => `BIND(EXISTS { ?a ${pick(COLUMNS)} ?x } AS ?c)`,
      () => `BIND(IF(NOT EXISTS { ${triple()} }, 1, 0) AS ?c)`,
      () => `FILTER(COALESCE(EXISTS { ?a ex:salary ?x }, false) = false)`,
      // A rule's or the guard's variable names, as the caller's.
      () => `${pick(RULE_NAMES)} ${pick(COLUMNS)} ?a . OPTIONAL { ?a ${pick(COLUMNS)} ${pick(RULE_NAMES)} }`,
      // Graphs the caller is not granted named inside EXISTS, MINUS and bound to ?g by VALUES.
      () => `FILTER EXISTS { GRAPH <${pick(graphs)}> { ?a ${pick(COLUMNS)} ?x } }`,
      () => `MINUS { GRAPH ?g { ?a ${pick(COLUMNS)} ?b } }`,
      () => `VALUES ?g { ${graphs.map((graph) => `<${graph}>`).join(' ')} } GRAPH ?g { ${plain()} }`,
      () => `GRAPH ?g { ?a ${pick(COLUMNS)} ?b } FILTER(?g != <${pick(graphs)}>)`,
      // One blank node label in two triples, and a blank node in a path's middle.
      () => `?a ${pick(COLUMNS)} _:x . _:x ${pick(COLUMNS)} ?b .`,
      () => `?a ex:note [ ex:team ?b ] .`,
    ])();
  const body = Array.from({ length: 1 + Math.floor(random() * 3) }, element).join(' ');
  const where = `WHERE { ${triple()} ${body} }`;
  // Ordered over IRIs only: blank nodes' order is their labels', and Oxigraph 0.5 panics sorting literals of mixed kinds
  // (docs/operations.md, a store fault of its own).
  const nonBlank = 'FILTER((!BOUND(?a) || isIRI(?a)) && (!BOUND(?b) || isIRI(?b)))';
  const form = pick([
    () => `SELECT * ${where}`,
    () => `SELECT DISTINCT ?a ?b ${where}`,
    () => `SELECT REDUCED ?a ?b ${where}`,
    () => `SELECT ?a ?b WHERE { { ${where.slice(6)} } ${nonBlank} } ORDER BY ?a DESC(?b) LIMIT 3 OFFSET 1`,
    () => `SELECT DISTINCT ?a WHERE { { ${where.slice(6)} } ${nonBlank} } ORDER BY ?a OFFSET 2`,
    () => `SELECT (COUNT(DISTINCT *) AS ?n) (COUNT(*) AS ?m) ${where}`,
    () => `SELECT ?a (COUNT(DISTINCT ?b) AS ?n) (SAMPLE(?b) AS ?one) ${where} GROUP BY ?a HAVING(COUNT(DISTINCT ?b) = 1)`,
    () => `SELECT ?a (GROUP_CONCAT(DISTINCT STR(?b); SEPARATOR="|") AS ?all) ${where} GROUP BY ?a`,
    () => `SELECT ?a (MIN(?b) AS ?lo) (MAX(STR(?b)) AS ?hi) ${where} GROUP BY ?a HAVING(COUNT(?b) >= 1)`,
    () => `SELECT ?a (EXISTS { ?a ${pick(COLUMNS)} ?x } AS ?has) (NOT EXISTS { ${triple()} } AS ?none) ${where}`,
    () => `SELECT ?a (COUNT(*) AS ?n) ${where} GROUP BY ?a HAVING(EXISTS { ?a ex:salary ?x } || COUNT(*) > 2)`,
    () => `SELECT ?has (COUNT(*) AS ?n) ${where} GROUP BY (EXISTS { ?a ${pick(COLUMNS)} ?x } AS ?has)`,
    () => `SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ${plain()} } } GROUP BY ?g`,
    () => `ASK ${where}`,
    () => `CONSTRUCT { ?a ?p ?b . ?a <urn:x:r> ?c } ${where}`,
    () => `DESCRIBE ?a ${where}`,
    () => `DESCRIBE ${pick(SUBJECTS)}`,
  ])();
  const [first = '', second = first, third = second] = graphs;
  const dataset = pick<[string, string[], string[]]>([
    ['', [], []],
    ['', [], []],
    ['', [], []],
    [`FROM <${first}> `, [], []],
    [`FROM <${first}> FROM NAMED <${second}> `, [], []],
    ['', [first], []],
    ['', [first, second], [first, third]],
    [`FROM <${third}> `, [second], [second]],
  ]);
  const [clause, defaultGraphs, namedGraphs] = dataset;
  const text = clause === '' ? form : form.includes(' WHERE {') ? form.replace(' WHERE {', ` ${clause}WHERE {`) : `${form} ${clause}`;
  return { query: `PREFIX ex: <http://example.org/rows#>\n${text}`, defaultGraphs, namedGraphs };
}

/**
 * Fixed shapes asked beside the drawn ones: EXISTS in every expression position (BIND, IF, a projection, ORDER BY,
 * HAVING, SAMPLE, inside OPTIONAL and GRAPH ?g), constant subjects of records another graph of the merged default graph
 * holds under another rule, a graph bound to ?g by BIND or a sub-select, blank node and literal ends, slices of ordered
 * IRIs, empty and zero-length patterns in GRAPH over ungranted graphs. Each over the rows vocabulary (prefix ex: added by the caller of this list).
 */
export const ROW_SHAPE_ATTACKS: readonly string[] = [
  `SELECT ?a WHERE { ?a ex:name ?n } ORDER BY DESC(EXISTS { ?a ex:salary ?x }) ?a LIMIT 1`,
  `SELECT (SUM(IF(EXISTS { ?a ex:salary ?x }, 1, 0)) AS ?n) WHERE { ?a ex:name ?m }`,
  `SELECT * WHERE { { SELECT ?a (EXISTS { ?a ex:salary ?x } AS ?h) WHERE { ?a ex:name ?n } } }`,
  `SELECT * WHERE { ?a ex:name ?n } VALUES ?a { ex:p2 ex:alice ex:d1 }`,
  `SELECT ?a WHERE { ?a ex:name ?n FILTER EXISTS { { SELECT ?a WHERE { ?a ex:salary ?x } } } }`,
  `SELECT * WHERE { BIND(<http://example.org/rows/members> AS ?g) GRAPH ?g { ?s ?p ?o } }`,
  `SELECT * WHERE { { SELECT ?g WHERE { VALUES ?g { <http://example.org/rows/members> <http://example.org/rows/main> } } } GRAPH ?g { ?s ex:member ?o } }`,
  `SELECT ?g WHERE { GRAPH ?g { } }`,
  `SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } FILTER(?g = <http://example.org/rows/members>) }`,
  `SELECT * WHERE { _:x ex:lead _:x }`,
  `SELECT * WHERE { "Apollo" ^ex:name ?s }`,
  `SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE { ?s ?p ?o }`,
  `SELECT ?s (GROUP_CONCAT(?p) AS ?ps) WHERE { ?s ?p ?o FILTER(?p = ex:salary) } GROUP BY ?s`,
  `ASK { ex:p2 ex:name ?n }`,
  `ASK { FILTER EXISTS { ex:p2 ex:budget 250 } }`,
  `SELECT * WHERE { FILTER EXISTS { ex:p2 ex:budget 250 } }`,
  `SELECT * WHERE { OPTIONAL { ex:p2 ex:budget ?b } }`,
  `SELECT * WHERE { MINUS { ex:p2 ex:budget ?b } }`,
  `SELECT ?x WHERE { BIND(ex:p2 AS ?x) FILTER EXISTS { ?x ex:budget 250 } }`,
  `SELECT ?x WHERE { VALUES ?x { ex:p1 ex:p2 ex:p3 ex:alice ex:bob } FILTER NOT EXISTS { ?x ex:name ?n } }`,
  `CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }`,
  `DESCRIBE ex:p1 ex:p2 ?x WHERE { ?x ex:lead ?y }`,
  `SELECT ?s ?o WHERE { ?s ex:lead ?o . ?o ex:lead ?s }`,
  `SELECT ?s WHERE { ?s ex:team ?t . ?o ex:team ?t FILTER(?s != ?o) }`,
  `SELECT * WHERE { ?s ex:note ?n . ?o ex:note ?n FILTER(?s != ?o) }`,
  `SELECT * WHERE { ?n ^ex:note ?s ; ex:text ?t }`,
  `SELECT * WHERE { ?s ex:note/ex:text ?t }`,
  `SELECT ?a ?b WHERE { ?a ex:lead ?b } ORDER BY ?a LIMIT 1 OFFSET 1`,
  `SELECT * WHERE { ?s ?p ?o FILTER(?p NOT IN (ex:name)) FILTER(isBlank(?s)) }`,
  `SELECT * WHERE { ?x ex:name ?n . FILTER(?n = "Borealis" || ?n = "Dark" || ?n = "Ghost") }`,
  `SELECT * WHERE { ex:p1 ex:name ?n . ex:p1 ex:budget ?b }`,
  `SELECT * WHERE { ex:p1 ex:name ?n . ?s ex:budget ?b }`,
  `SELECT * WHERE { ex:p1 ?p ?o }`,
  `SELECT * WHERE { ex:p1 ?p ?o . ?o ?q ?r }`,
  `SELECT * WHERE { GRAPH ?g { ex:p1 ex:name ?n . ex:p1 ex:budget ?b } }`,
  `SELECT * WHERE { ex:d1 ex:name ?n . ex:p1 ex:name ?m }`,
  `SELECT * WHERE { ex:d1 ex:name ?n OPTIONAL { ex:p1 ex:budget ?m } }`,
  `SELECT * WHERE { ?s ex:name ?n OPTIONAL { ex:p1 ex:budget ?m . ?s ex:budget ?c } }`,
  `SELECT * WHERE { ?s ex:name ?n FILTER EXISTS { ex:p1 ex:budget 101 } }`,
  `SELECT * WHERE { ?s ex:name ?n FILTER NOT EXISTS { ex:p1 ex:budget 101 } }`,
  `ASK { ex:p1 ex:budget 101 }`,
  `ASK { ex:p1 ex:budget 101 . ex:p1 ex:name "Apollo" }`,
  `SELECT * WHERE { ex:p1 ex:budget ?b . ex:d1 ex:budget ?c . ex:r1 ex:budget ?d }`,
  `SELECT * WHERE { ex:p1 ex:budget ?b . ex:d1 ex:budget ?c . ?s ex:budget ?b }`,
  `SELECT * WHERE { ?s ex:budget ?b . ex:d1 ex:budget ?c . ex:p2 ex:budget ?d }`,
  `SELECT * WHERE { ?s ex:budget ?b . ex:d1 ex:budget ?c MINUS { ex:p1 ex:budget ?b } }`,
  `SELECT * WHERE { ?s ex:budget ?b . { ex:d1 ex:budget ?c } UNION { ex:p2 ex:budget ?c } }`,
  `SELECT * WHERE { ?s ex:budget ?b . ?t ex:name ?n . ex:d1 ex:budget ?c . ex:r1 a ?k }`,
  `SELECT * WHERE { ?s ex:budget ?b . ex:d1 ex:budget ?c . ex:d1 a ?k . ex:r1 ex:name ?m }`,
  `SELECT * WHERE { ?s ex:budget ?b . ex:d1 ex:budget ?c . ex:d1 ex:lead ?k }`,
  `SELECT * WHERE { ?s a ex:PublicRecord . ex:r1 ex:budget ?c . ex:p1 ex:budget 101 }`,
  `SELECT ?g ?s ?h WHERE { GRAPH ?g { ?s ex:name ?n BIND(EXISTS { ?s ex:budget ?b } AS ?h) } }`,
  `SELECT ?g ?s ?h WHERE { GRAPH ?g { ?s ex:name ?n } BIND(EXISTS { GRAPH ?g { ?s ex:budget 101 } } AS ?h) }`,
  `SELECT ?s ?h WHERE { ?s ex:name ?n { SELECT ?s (COUNT(*) AS ?h) WHERE { ?s ?p ?o } GROUP BY ?s HAVING(EXISTS { ?s ex:salary ?x }) } }`,
  `SELECT ?s WHERE { { SELECT ?s WHERE { ?s ex:name ?n } ORDER BY DESC(EXISTS { ?s ex:salary ?x }) STR(?s) LIMIT 2 } }`,
  `SELECT ?s WHERE { ?s ex:name ?n FILTER EXISTS { ?s ex:lead ?l FILTER EXISTS { ?l ex:salary ?x } } }`,
  `SELECT ?s WHERE { ?s ex:name ?n FILTER NOT EXISTS { ?s ex:lead ?l FILTER NOT EXISTS { ?l ex:salary ?x } } }`,
  `SELECT ?s WHERE { ?s ex:name ?n FILTER EXISTS { ?s ex:lead ?l MINUS { ?l ex:salary ?x } } }`,
  `SELECT ?s ?k WHERE { ?s ex:name ?n OPTIONAL { ?s ex:lead ?l BIND(EXISTS { ?l ex:salary ?x } AS ?k) } }`,
  `SELECT ?s ?k WHERE { GRAPH ?g { ?s ex:name ?n OPTIONAL { ?s ex:lead ?l FILTER(EXISTS { ?l ex:salary ?x } || ?g = ?g) } } }`,
  `SELECT ?s (SAMPLE(EXISTS { ?s ex:salary ?x }) AS ?k) WHERE { ?s ex:name ?n } GROUP BY ?s`,
  `SELECT ?s (MAX(IF(EXISTS { ?s ex:salary ?x }, 1, 0)) AS ?k) WHERE { ?s ex:name ?n } GROUP BY ?s`,
  `CONSTRUCT { ?s ex:has ?k } WHERE { ?s ex:name ?n BIND(EXISTS { ?s ex:salary ?x } AS ?k) }`,
  `DESCRIBE ?s WHERE { ?s ex:name ?n FILTER EXISTS { ?s ex:salary ?x } }`,
  `SELECT ?s WHERE { ?s ex:name ?n FILTER EXISTS { ?s ?p ?x FILTER(?p = ex:salary) } }`,
  `SELECT ?s ?p WHERE { ?s ex:name ?n FILTER EXISTS { ?s ?p ?x } VALUES ?p { ex:salary ex:budget } }`,
  `SELECT ?s ?p WHERE { VALUES ?p { ex:salary ex:budget } ?s ?p ?x }`,
  `SELECT ?s ?p WHERE { BIND(ex:salary AS ?p) ?s ?p ?x }`,
  `SELECT ?s ?p WHERE { ?s ex:name ?n . ?s ?p ?x FILTER(STR(?p) = "http://example.org/rows#salary") }`,
  `SELECT ?s ?p WHERE { ?s ex:name ?n OPTIONAL { ?s ?p ?x FILTER(?p = ex:salary) } }`,
  `SELECT ?s (COUNT(?p) AS ?c) WHERE { ?s ex:name ?n OPTIONAL { ?s ?p ?x } } GROUP BY ?s`,
  `SELECT ?s WHERE { ?s ex:name ?n FILTER NOT EXISTS { ?s ?p ?x FILTER(?p = ex:salary) } }`,
  `SELECT ?g WHERE { VALUES ?g { <http://example.org/rows/members> <http://example.org/rows/main> <http://example.org/rows/none> } FILTER EXISTS { GRAPH ?g { } } }`,
  `SELECT ?g WHERE { GRAPH ?g { FILTER(true) } }`,
  `SELECT ?g ?x WHERE { GRAPH ?g { BIND(1 AS ?x) } }`,
  `SELECT ?g ?x WHERE { GRAPH ?g { VALUES ?x { 1 } } }`,
  `SELECT * WHERE { GRAPH <http://example.org/rows/members> { } }`,
  `ASK { GRAPH <http://example.org/rows/members> { } }`,
  `ASK { GRAPH <http://example.org/rows/members> { FILTER(true) } }`,
  `SELECT * WHERE { GRAPH <http://example.org/rows/members> { BIND(1 AS ?x) } }`,
  `SELECT ?g WHERE { GRAPH ?g { OPTIONAL { ?s ex:member ?o } } }`,
  `SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { OPTIONAL { ?s ?p ?o } } } GROUP BY ?g`,
  `SELECT * WHERE { FILTER NOT EXISTS { GRAPH <http://example.org/rows/members> { } } }`,
  `SELECT * WHERE { MINUS { GRAPH ?g { } } }`,
  `SELECT ?g WHERE { { SELECT ?g WHERE { GRAPH ?g { } } } }`,
  `SELECT ?g WHERE { VALUES ?g { <http://example.org/rows/members> } GRAPH ?g { } }`,
  `SELECT ?g WHERE { BIND(<http://example.org/rows/members> AS ?g) FILTER EXISTS { GRAPH ?g { FILTER(true) } } }`,
  `SELECT ?g ?s WHERE { GRAPH ?g { ?s ex:lead? ?s } }`,
  `SELECT ?x WHERE { GRAPH <http://example.org/rows/members> { ex:p1 ex:member? ?x } }`,
  `SELECT ?x WHERE { GRAPH <http://example.org/rows/members> { ex:p1 ex:nothing* ?x } }`,
  `SELECT ?x WHERE { ex:p1 ex:nothing* ?x }`,
  `SELECT ?x WHERE { ex:zzz ex:nothing* ?x }`,
  `SELECT ?g ?x WHERE { GRAPH ?g { ex:zzz ex:nothing* ?x } }`,
  `SELECT ?g ?x WHERE { VALUES ?g { <http://example.org/rows/members> } GRAPH ?g { ex:zzz ex:nothing? ?x } }`,
  `SELECT ?g ?x WHERE { VALUES ?g { <http://example.org/rows/members> } GRAPH ?g { ?x ex:nothing? ex:zzz } }`,
];
