// The forward chainer computes the same closure as N3.Reasoner (run until it stops growing) over generated rules: joins, variable predicates, repeated variables, several conclusions, rules feeding each other's constants.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Parser, Reasoner, Store, type Quad } from 'n3';
import { classifyRules, type HornRule } from '../../src/policy/rules/classify-rules.js';
import { forwardChain } from '../../src/policy/rules/forward-chain.js';
import { skolemIri } from '../../src/vocabulary.js';

const PREFIX = '@prefix ex: <https://example.org/>.\n';

function read(text: string): { rules: readonly HornRule[]; facts: readonly Quad[] } {
  const reading = classifyRules(PREFIX + text);
  assert.ok(reading.fragment, reading.fragment ? '' : `${reading.reason}\n${text}`);
  return reading;
}

/** The closure as sorted N3.js ids, one string per triple. */
function ids(quads: Iterable<Quad>): string[] {
  return [...quads].map(({ subject, predicate, object }) => `${subject.id} ${predicate.id} ${object.id}`).sort();
}

/** N3.Reasoner's closure: `reason` again until the store stops growing, since it can miss a link in one pass. */
function n3Closure(facts: readonly Quad[], rules: readonly HornRule[]): string[] {
  const store = new Store([...facts]);
  const reasoner = new Reasoner(store);
  const input = rules.map(({ premise, conclusion }) => ({ premise: [...premise], conclusion: [...conclusion] }));
  for (let size = -1; size !== store.size;) {
    size = store.size;
    reasoner.reason(input);
  }
  return ids(store.getQuads(null, null, null, null));
}

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random facts and rules over a few IRIs, strings and predicates; rules join up to three premises. */
function generate(seed: number): string {
  const random = mulberry32(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const nodes = ['ex:a', 'ex:b', 'ex:c', 'ex:d', 'ex:e', '"g"', '"h"@en'];
  const predicates = ['ex:p', 'ex:q', 'ex:r', 'ex:s'];
  const variables = ['?x', '?y', '?z', '?w'];
  const lines: string[] = [];
  for (let i = 0; i < 6 + Math.floor(random() * 10); i += 1) lines.push(`${pick(nodes.slice(0, 6))} ${pick(predicates)} ${pick(nodes)}.`);
  for (let rule = 0; rule < 1 + Math.floor(random() * 4); rule += 1) {
    const bound = new Set<string>();
    const predicateOnly = new Set<string>();
    const node = () => (random() < 0.2 ? pick(nodes) : pick(variables));
    const premise: string[] = [];
    for (let i = 0; i < 1 + Math.floor(random() * 3); i += 1) {
      const s = node();
      const p = random() < 0.15 ? '?v' : pick(predicates);
      const o = node();
      premise.push(`${s} ${p} ${o}.`);
      for (const term of [s, o]) if (term.startsWith('?')) bound.add(term);
      if (p === '?v') predicateOnly.add(p);
    }
    for (const term of bound) predicateOnly.delete(term);
    const known = [...bound];
    const conclusion: string[] = [];
    for (let i = 0; i < 1 + Math.floor(random() * 2); i += 1) {
      const term = () => (known.length > 0 && random() < 0.8 ? pick(known) : pick(nodes.slice(0, 5)));
      const p = predicateOnly.has('?v') && random() < 0.3 ? '?v' : pick(predicates);
      conclusion.push(`${term()} ${p} ${term()}.`);
    }
    lines.push(`{ ${premise.join(' ')} } => { ${conclusion.join(' ')} }.`);
  }
  return lines.join('\n');
}

describe('forwardChain', () => {
  it('derives what N3.Reasoner derives, for 300 generated rule sets', () => {
    let derivedSomething = 0;
    for (let seed = 1; seed <= 300; seed += 1) {
      const text = generate(seed);
      const { rules, facts } = read(text);
      const closure = forwardChain(facts, rules);
      const expected = n3Closure(facts, rules);
      assert.deepEqual(ids(closure.quads()), expected, `seed ${seed}:\n${text}`);
      if (expected.length > facts.length) derivedSomething += 1;
    }
    // The generator is not vacuous: most sets derive.
    assert.ok(derivedSomething > 150, `${derivedSomething} of 300 sets derived anything`);
  });

  it('follows a premise constant that only a later rule produces, and a cycle, to the fixpoint', () => {
    const { rules, facts } = read(`
      ex:pol ex:openTo ex:Everyone. "a" ex:sub "b". "b" ex:sub "c". "c" ex:sub "a". ex:pol ex:for "c".
      { ?p ex:for ex:Everyone } => { ?p ex:grants ex:extra }.
      { ?p ex:openTo ?who } => { ?p ex:for ?who }.
      { ?sub ex:sub ?super. ?p ex:for ?super } => { ?p ex:for ?sub }.
    `);
    const found = ids(forwardChain(facts, rules).quads());
    for (const triple of [
      'https://example.org/pol https://example.org/grants https://example.org/extra',
      'https://example.org/pol https://example.org/for "a"',
      'https://example.org/pol https://example.org/for "b"',
    ]) {
      assert.ok(found.includes(triple), triple);
    }
  });

  it('numbers blank nodes of the input as the reserved IRIs EYE is handed, and lists each triple once', () => {
    const quads = new Parser().parse(
      '_:c <https://example.org/in> <https://example.org/x>. <https://example.org/x> <https://example.org/in> _:c.',
    );
    const { rules } = read('{ ?a ex:in ?b } => { ?b ex:in ?a }.');
    const closure = forwardChain(quads, rules);
    assert.equal(closure.size, 2);
    const label = quads[0]?.subject.value ?? '';
    assert.ok(closure.terms.some((term) => term.termType === 'NamedNode' && term.value === skolemIri(label)));
    assert.ok(closure.terms.every((term) => term.termType !== 'BlankNode'));
  });
});

describe('forwardChain with trace: the first derivation of each triple', () => {
  const { rules, facts } = read(`
    ex:a ex:next ex:b. ex:b ex:next ex:c. ex:c ex:next ex:d. ex:d ex:next ex:a.
    ex:a ex:label "start".
    { ?x ex:next ?y } => { ?x ex:reaches ?y }.
    { ?x ex:reaches ?y. ?y ex:next ?z } => { ?x ex:reaches ?z }.
    { ?x ex:reaches ?x. ?x ex:label ?l } => { ?x ex:onCycle ?l }.
  `);
  const closure = forwardChain(facts, rules, { trace: true });
  const key = (quad: Quad) => `${quad.subject.id} ${quad.predicate.id} ${quad.object.id}`;
  const inClosure = new Set(closure.quads().map(key));

  it('justifies every triple of the closure by a stated triple or a rule whose premises are in the closure', () => {
    for (const quad of closure.quads()) {
      const why = closure.justify(quad.subject, quad.predicate, quad.object);
      assert.ok(why !== undefined, key(quad));
      const stated = facts.some((fact) => key(fact) === key(quad));
      assert.equal(why.kind, stated ? 'stated' : 'derived', key(quad));
      if (why.kind !== 'derived') continue;
      const rule = rules[why.rule];
      assert.ok(rule !== undefined);
      assert.equal(why.premises.length, rule.premise.length);
      for (const premise of why.premises) assert.ok(inClosure.has(key(premise)), key(premise));
      // Binding the rule's variables from its premises' instances gives the triple as a conclusion.
      const bindings = new Map<string, Quad['object']>();
      const bind = (pattern: Quad['object'] | Quad['subject'] | Quad['predicate'], term: Quad['object']) => {
        if (pattern.termType !== 'Variable') return pattern.equals(term);
        const bound = bindings.get(pattern.value);
        if (bound === undefined) bindings.set(pattern.value, term);
        return bound === undefined || bound.equals(term);
      };
      const fits = rule.premise.every((pattern) =>
        why.premises.some(
          (premise) =>
            pattern.predicate.equals(premise.predicate) && bind(pattern.subject, premise.subject) && bind(pattern.object, premise.object),
        ),
      );
      assert.ok(fits, key(quad));
      const concluded = rule.conclusion.map((pattern) =>
        [pattern.subject, pattern.predicate, pattern.object]
          .map((term) => (term.termType === 'Variable' ? bindings.get(term.value)?.id : term.id))
          .join(' '),
      );
      assert.ok(concluded.includes(key(quad)), key(quad));
    }
  });

  it('ends every chain at stated triples, even around a cycle', () => {
    const depth = (quad: Quad, seen: Set<string>): number => {
      assert.ok(!seen.has(key(quad)), `a chain came back to ${key(quad)}`);
      const why = closure.justify(quad.subject, quad.predicate, quad.object);
      if (why?.kind !== 'derived') return 0;
      const inner = new Set(seen).add(key(quad));
      return 1 + Math.max(...why.premises.map((premise) => depth(premise, inner)));
    };
    for (const quad of closure.quads()) assert.ok(depth(quad, new Set()) <= inClosure.size);
    const onCycle = closure.quads().find((quad) => quad.predicate.value === 'https://example.org/onCycle');
    assert.ok(onCycle !== undefined);
    assert.ok(depth(onCycle, new Set()) >= 4, 'a reaches a through four next steps');
  });

  it('answers undefined for a triple outside the closure, and stated for everything without trace', () => {
    const [a, next] = [facts[0]!.subject, facts[0]!.predicate];
    assert.equal(closure.justify(a, next, a), undefined);
    const untraced = forwardChain(facts, rules);
    const derived = closure.quads().find((quad) => quad.predicate.value === 'https://example.org/reaches')!;
    assert.deepEqual(untraced.justify(derived.subject, derived.predicate, derived.object), { kind: 'stated' });
  });
});
