// Layouts: a text read through the layout another text of its shape left is read exactly as the lexer reads it, or not at all.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { layoutOf, lexQueryShape, matchLayout, type QueryShape, type ShapeLayout } from '../../src/sparql/lex-query-shape.js';
import { createShapeLayouts } from '../../src/sparql/shape-layouts.js';
import { embeddedSources, goldenSources, LOCALS, POOLS, random, w3cSources } from '../helpers/query-corpus.js';

const BASE = 'http://localhost/';

/** Everything a shape tells the planner, for comparing a match with the lexer's reading. */
function reading(shape: QueryShape | undefined): string {
  if (shape === undefined) return 'none';
  const { key, refs, verbs, classes, fill, raw, code } = shape;
  return JSON.stringify({ key, refs, verbs, classes, fill, raw, code });
}

/**
 * Templates whose constants touch the code around them as closely as the lexer allows: `<` before a constant
 * (an IRIREF could run on into it), escapes, signs, dots, path operators, a language tag and a comment.
 */
const TIGHT = [
  'PREFIX ex: <http://e/> SELECT * { ?s ex:p ?o FILTER(?o<=5||?o>=<http://e/x>&&?o!=ex:y) }',
  'PREFIX ex: <http://e/> SELECT * { ?s ex:p ex:a\\,b,ex:c;ex:q 5.,6 }',
  'PREFIX ex: <http://e/> SELECT * { ?s ex:p "a"@en-"b" , "c"@en-GB }',
  'PREFIX ex: <http://e/> SELECT * WHERE{?s ex:p ?o.FILTER(?o=-5)FILTER(?o=+.5)FILTER(?o=-ex:z)}',
  'PREFIX ex: <http://e/> SELECT * WHERE{?s ex:p/ex:q|^ex:r ?o . ?s !ex:p ?z . ?s (ex:p)*ex:o}',
  'PREFIX ex: <http://e/> SELECT * { ?s ex:p ?o } VALUES ?o {<a> ex:b "c" 1 2.5 3e4 ex:d}',
  'BASE <http://b/> PREFIX : <http://e/> SELECT * { <s> :p <../o>,:q . ?s :r[:t 7] }',
  'PREFIX ex: <http://e/> SELECT * { ?s ex:p ?o # a comment ex:q\n ; ex:q "x"^^ex:dt ; ex:r ?v } LIMIT 5',
  'PREFIX ex: <http://e/> SELECT (ex:f(?o,"a",1) AS ?x) { GRAPH ex:g { ?s ex:p ?o, ?o2 } FILTER(?o IN(ex:a,ex:b)) }',
  'PREFIX ex: <http://e/> ASK { ?s ex:p \'\'\'long\nstring\'\'\', """other""" . ?s ex:q ex:a . ?s ex:q ex:a }',
  'PREFIX ex: <http://e/> SELECT * { ?s ex:p ?o FILTER(?o<ex:a) FILTER(?o>ex:b) FILTER(?o<"z") }',
  'PREFIX ex: <http://e/> SELECT * { ?s ex:p ex:a.ex:b ex:p ?o }',
  'PREFIX ex: <http://e/> SELECT * { ?s ex:p ex:a\\(<http://e/b> }',
  'PREFIX ex: <http://e/> SELECT * { ?s ex:p ?x FILTER(?x<ex:a\\.b>3) FILTER(?x<=ex:a\\.b>=3) }',
  'PREFIX ex: <http://e/> SELECT * { GRAPH ex:g\\(<http://e/b> { ?s ?p ?o } }',
  'PREFIX ex: <http://e/> SELECT * { GRAPH <http://e/g> { ?s ?p <http://e/x> } } # ends in a comment',
  'PREFIX ex: <http://e/> SELECT * { ?s ?p ex:a } PREFIX ex: <http://f/> BASE <http://b/> ASK { ?s ?p ex:b, <c> }',
];

/** Tokens that are constants of some class, tokens that are not, and text that is no token at all. */
const STRANGERS = [
  'ex:m',
  '<http://e/g>',
  '<http://e/x>',
  'ex:b>3',
  'a',
  'true',
  'false',
  '_:b',
  '?v',
  '$v',
  'ex:',
  ':x',
  'ex:a.b',
  'ex:a-',
  'ex:a\\,b',
  'ex:a\\.',
  'ex:a.',
  'ex:\\u0041',
  'e\u0301x:a',
  '\u00e9:a',
  'ex:%4',
  '5.e3',
  '5.',
  '.5',
  '1e',
  '1e+',
  '-5',
  '+5',
  '5-6',
  '"a"@en',
  '"a"^^<http://e/dt>',
  '"a"^^ex:dt',
  '"\\u0041"',
  '"a\\qb"',
  '"a\nb"',
  '"open',
  "'''a'b'''",
  '<a b>',
  '<a>',
  '<>',
  '<http://x/\\u0041>',
  '<http://x/a>>',
  '<',
  '<=',
  '(',
  ')',
  '[]',
  '',
  ' ',
  '#c\n',
  'FILTER',
  'GRAPH <http://g>',
  '{}',
];

/** One text of `layout` with its constants replaced from the pools (same class, another class or no constant at all). */
function variant(shape: QueryShape, layout: ShapeLayout, next: () => number): string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const chosen = new Map<number, string>();
  let out = layout.head;
  shape.refs.forEach((k, o) => {
    const cls = shape.classes[k] ?? 'S';
    const roll = next();
    let token: string;
    if (roll < 0.15 && chosen.has(k)) token = chosen.get(k)!;
    else if (roll < 0.3) token = shape.raw[k] ?? '';
    else if (roll < 0.45)
      token = pick([...chosen.values(), shape.raw[0] ?? '']); // equal to another constant
    else if (roll < 0.6 && cls === 'I') token = 'ex:' + pick(LOCALS) + k;
    else if (roll < 0.85) token = pick(POOLS[cls] ?? []);
    else if (roll < 0.93) token = pick(POOLS[pick(Object.keys(POOLS))] ?? []);
    else token = pick(STRANGERS);
    chosen.set(k, token);
    out += token + (layout.pieces[o] ?? '');
  });
  // Now and then the code itself differs a little, around a constant or at the end.
  const roll = next();
  if (roll < 0.1) {
    const at = Math.floor(next() * out.length);
    out = out.slice(0, at) + pick([' ', '', '.', ':', '\\', '<', '"', 'x', '5', '-']) + out.slice(at + 1);
  } else if (roll < 0.15) out += pick([' ', '.', '}', ' LIMIT 5', '5', 'x', '"']);
  return out;
}

test('a text read through the layout of another text is read exactly as the lexer reads it, or left to the lexer', () => {
  const queries = [...goldenSources(), ...w3cSources(), ...embeddedSources()].map((source) => source.query).concat(TIGHT);
  assert.ok(queries.length > 100, `only ${queries.length} queries found`);
  let layouts = 0;
  let tried = 0;
  let matched = 0;
  /** Texts the lexer reads into the layout's own key that the match left to the lexer. */
  let declined = 0;
  const mismatches: string[] = [];
  queries.forEach((query, index) => {
    const shape = lexQueryShape(query, BASE);
    const layout = shape === undefined ? undefined : layoutOf(shape);
    if (shape === undefined || layout === undefined) return;
    layouts++;
    // The text itself is of its own layout.
    assert.equal(reading(matchLayout(query, layout)), reading(shape), query);
    const next = random(index * 7919 + 1);
    for (let v = 0; v < 40; v++) {
      const text = variant(shape, layout, next);
      const expected = lexQueryShape(text, BASE);
      const actual = matchLayout(text, layout);
      tried++;
      if (actual !== undefined) {
        matched++;
        if (reading(actual) !== reading(expected) && mismatches.length < 10) {
          mismatches.push(`--- layout of\n${query}\n--- text\n${text}\n--- lexer\n${reading(expected)}\n--- match\n${reading(actual)}`);
        }
      } else if (expected !== undefined && expected.key === shape.key) declined++;
    }
  });
  assert.deepEqual(mismatches, [], mismatches.join('\n\n'));
  // The match must not be a test that cannot fail: most texts of a layout are read through it.
  assert.ok(layouts > 100, `only ${layouts} layouts`);
  assert.ok(matched > tried / 4, `only ${matched} of ${tried} texts matched`);
  console.log(
    `# layouts: ${layouts} layouts, ${tried} texts, ${matched} read through a layout, ${declined} of the layout's key left to the lexer`,
  );
});

test('tight templates: a layout only where any constant reads alike, and every stranger in every slot reads as the lexer reads it', () => {
  // The `<` before a constant and the escaped comma: another constant there could be lexed otherwise, so no layout.
  const shapes = TIGHT.map((query) => lexQueryShape(query, BASE));
  assert.ok(
    shapes.every((shape) => shape !== undefined),
    'the lexer reads every template',
  );
  assert.equal(layoutOf(shapes[0]!), undefined, '`<=` then a constant');
  assert.equal(layoutOf(shapes[10]!), undefined, '`<` then a constant');
  assert.equal(layoutOf(shapes[12]!), undefined, 'an escaped `(` then a constant');
  assert.equal(layoutOf(shapes[2]!), undefined, 'a language tag and `-` then a constant (`@en-5` is one tag)');
  for (const [index, shape] of shapes.entries()) {
    if ([0, 2, 10, 12, 13, 14, 16].includes(index)) continue;
    assert.notEqual(layoutOf(shape!), undefined, TIGHT[index]);
  }
  assert.equal(layoutOf(shapes[13]!), undefined, '`<` or `<=` then a constant');
  assert.equal(layoutOf(shapes[14]!), undefined, 'an escaped `(` in the code then a constant');
  assert.equal(layoutOf(shapes[16]!), undefined, 'a declaration after a constant');
  // Every stranger in every slot of every template, read through the template's layout as written (or, for the
  // templates left without one, through the layout it would have had: the match must then not read it either).
  let compared = 0;
  for (const [index, shape] of shapes.entries()) {
    const layout = layoutOf(shape!);
    if (layout === undefined) continue;
    const written = (o: number) => shape!.raw[shape!.refs[o]!] ?? '';
    for (let slot = 0; slot < shape!.refs.length; slot++) {
      for (const stranger of STRANGERS) {
        let text: string = layout.head;
        shape!.refs.forEach((_, o) => (text += (o === slot ? stranger : written(o)) + (layout.pieces[o] ?? '')));
        const matched = matchLayout(text, layout);
        if (matched !== undefined) assert.equal(reading(matched), reading(lexQueryShape(text, BASE)), `${TIGHT[index]}\n${text}`);
        compared++;
      }
    }
  }
  assert.ok(compared > 1000, `only ${compared} texts`);
});

test('the layouts are bounded: by count, by characters and per head, and a flood leaves them correct', () => {
  const layouts = createShapeLayouts({ maxLayouts: 20, maxChars: 4000 });
  const texts = (i: number, constant: string) => `PREFIX ex: <http://e/> SELECT * { ?s ?p${i} ${constant} }`;
  for (let i = 0; i < 200; i++) {
    const shape = lexQueryShape(texts(i, `"v${i}"`), BASE)!;
    assert.equal(layouts.match(texts(i, `"v${i}"`)), undefined);
    layouts.learn(shape);
    assert.ok(layouts.size <= 20, `${layouts.size} layouts held`);
  }
  // The latest layouts still match, and read as the lexer does.
  for (let i = 190; i < 200; i++) {
    const text = texts(i, '"another"');
    assert.equal(reading(layouts.match(text)), reading(lexQueryShape(text, BASE)));
  }
  // One head (the text before the first constant) holds at most four layouts: the latest.
  const one = createShapeLayouts({ maxLayouts: 100, maxChars: 1 << 20 });
  const headed = (i: number, constant: string) => `SELECT * { <http://e/s> ?p${i} ${constant} }`;
  for (let i = 0; i < 10; i++) one.learn(lexQueryShape(headed(i, '1'), BASE)!);
  assert.equal(one.size, 4);
  assert.equal(one.match(headed(0, '2')), undefined);
  assert.equal(reading(one.match(headed(9, '2'))), reading(lexQueryShape(headed(9, '2'), BASE)));
  // A layout larger than the bound is not held.
  const small = createShapeLayouts({ maxLayouts: 100, maxChars: 50 });
  small.learn(lexQueryShape(texts(1, '"x"'), BASE)!);
  assert.equal(small.size, 0);
});

test('the radix tree of heads finds the layout whose head a text starts with, among heads that share a prologue', () => {
  const layouts = createShapeLayouts({ maxLayouts: 1000, maxChars: 1 << 22 });
  const prologue = 'PREFIX ex: <http://example.org/vocabulary/> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n';
  const shapeTexts = Array.from({ length: 300 }, (_, i) => {
    // Heads that split at every depth (`?y1` is the start of `?y10`), all after one prologue.
    const head = `SELECT ?x${i % 7} ?y${i} WHERE { ?x${i % 7} ?p `;
    return (constant: string) => `${prologue}${head}${constant} . ?x ex:r${i} ?y }`;
  });
  for (const text of shapeTexts) layouts.learn(lexQueryShape(text('"a"'), BASE)!);
  assert.equal(layouts.size, 300);
  shapeTexts.forEach((text, i) => {
    const query = text(`"value ${i}"`);
    const matched = layouts.match(query);
    assert.notEqual(matched, undefined, query);
    assert.equal(reading(matched), reading(lexQueryShape(query, BASE)));
  });
  // A text that starts like all of them but is of none.
  assert.equal(layouts.match(`${prologue}SELECT ?x0 ?y0 WHERE { ?x0 ?p ex:a . ?x ex:r999 ?y }`), undefined);
  assert.equal(layouts.match(`${prologue}SELECT ?x0 ?y WHERE { ?x0 ?p ex:a . ?x ex:r0 ?y }`), undefined);
});

test('a layout learned twice is held once, and a text that starts like many layouts tries a few and is lexed', () => {
  const layouts = createShapeLayouts({ maxLayouts: 100, maxChars: 1 << 20 });
  const text = 'SELECT * { ?x ?p "a" }';
  layouts.learn(lexQueryShape(text, BASE)!);
  layouts.learn(lexQueryShape(text, BASE)!);
  assert.equal(layouts.size, 1);
  // Heads nested in one another ("SELECT * { ?s ", "SELECT * { ?s ?p ", ...), four layouts each: none fits the text.
  for (const head of ['SELECT * { ?s ', 'SELECT * { ?s ?p ', 'SELECT * { ?s ?p ?o . ?s ']) {
    for (let i = 0; i < 4; i++) layouts.learn(lexQueryShape(`${head}<http://e/${i}> ?v${i} }`, BASE)!);
  }
  assert.equal(layouts.size, 13);
  const stranger = 'SELECT * { ?s ?p ?o . ?s <http://e/x> ?w }';
  assert.equal(layouts.match(stranger), undefined);
  assert.equal(reading(layouts.match('SELECT * { ?x ?p "b" }')), reading(lexQueryShape('SELECT * { ?x ?p "b" }', BASE)));
});

test('a text crafted to crowd the equality table of a match (constants of one length and one tail) is lexed, where the seeded hash applies', () => {
  // Every constant has the same length and the same last eight characters: the match's tail hash puts them all in
  // one bucket chain, past its longest walk, so the match gives up; the lexer's seeded hash reads the text whole.
  const constants = (salt: string) => Array.from({ length: 100 }, (_, i) => `"${salt}${String(i).padStart(3, '0')}-same-tail"`);
  const text = (values: readonly string[]) => `SELECT * { ?s ?p ?o VALUES ?o { ${values.join(' ')} } }`;
  const layout = layoutOf(lexQueryShape(text(constants('a')), BASE)!)!;
  assert.notEqual(layout, undefined);
  const crafted = text(constants('b'));
  const lexed = lexQueryShape(crafted, BASE);
  assert.notEqual(lexed, undefined, 'the lexer reads the crafted text');
  assert.equal(matchLayout(crafted, layout), undefined, 'the match leaves the crowded text to the lexer');
  // Through the planner's layouts the crafted text gets the lexer's reading.
  const layouts = createShapeLayouts({ maxLayouts: 10, maxChars: 1 << 20 });
  layouts.learn(lexQueryShape(text(constants('a')), BASE)!);
  assert.equal(layouts.match(crafted), undefined);
  // A text of the same layout whose constants differ in their tails is matched.
  const honest = text(Array.from({ length: 100 }, (_, i) => `"b-same-tail-${String(i).padStart(3, '0')}"`));
  assert.equal(reading(matchLayout(honest, layout)), reading(lexQueryShape(honest, BASE)));
});
