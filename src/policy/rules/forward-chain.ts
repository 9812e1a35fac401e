// Computes the closure of Horn rules over triples by semi-naive forward chaining on interned term numbers (on the policy worker, and on the command line's thread for `check --why`).

import { DataFactory, type Quad, type Term } from 'n3';
import type { HornRule } from './classify-rules.js';
import { skolemIri } from '../../vocabulary.js';

/** A term of the closure: blank nodes of the input are already the reserved IRIs skolemIri makes. */
export type ClosureTerm = Quad['subject'] | Quad['object'];

/**
 * A set of (subject, object) number pairs: an open-addressing hash table in one Int32Array
 * (subject + 1, object per slot; 0 marks a free slot), so half a million pairs cost no
 * object and no garbage.
 */
class PairSet {
  private table = new Int32Array(2 * 1024);
  private mask = 1023;
  private size = 0;

  /** Adds the pair; true when it was not there. */
  add(s: number, o: number): boolean {
    const { table, mask } = this;
    for (let slot = hash(s, o) & mask; ; slot = (slot + 1) & mask) {
      const at = slot * 2;
      const key = table[at] as number;
      if (key === 0) {
        table[at] = s + 1;
        table[at + 1] = o;
        this.size += 1;
        if (this.size * 2 > mask) this.grow();
        return true;
      }
      if (key === s + 1 && table[at + 1] === o) return false;
    }
  }

  has(s: number, o: number): boolean {
    const { table, mask } = this;
    for (let slot = hash(s, o) & mask; ; slot = (slot + 1) & mask) {
      const at = slot * 2;
      const key = table[at] as number;
      if (key === 0) return false;
      if (key === s + 1 && table[at + 1] === o) return true;
    }
  }

  private grow(): void {
    const old = this.table;
    this.mask = this.mask * 2 + 1;
    this.table = new Int32Array((this.mask + 1) * 2);
    this.size = 0;
    for (let at = 0; at < old.length; at += 2) {
      const key = old[at] as number;
      if (key !== 0) this.add(key - 1, old[at + 1] as number);
    }
  }
}

function hash(s: number, o: number): number {
  let h = Math.imul(s, 0x9e3779b1) ^ Math.imul(o + 0x7f4a7c15, 0x85ebca6b);
  h ^= h >>> 15;
  return Math.imul(h, 0x2c1b3c6d) ^ (h >>> 12);
}

/** The triples of one predicate: a flat list of (subject, object) numbers, a set of pairs, and indexes built on first use. */
class Relation {
  /** s0, o0, s1, o1, ...: every triple in the order it was added. */
  readonly pairs: number[] = [];
  private readonly keys = new PairSet();
  private readonly bySubject = new Index(0);
  private readonly byObject = new Index(1);
  /** How much of `pairs` the joins see: a round's new triples join them only when the round ends. */
  private committed = 0;

  /** Adds (s, o) to the set; true when it is new. The pair is matched only after `commit`. */
  add(s: number, o: number): boolean {
    if (!this.keys.add(s, o)) return false;
    this.pairs.push(s, o);
    return true;
  }

  has(s: number, o: number): boolean {
    return this.keys.has(s, o);
  }

  /** Makes every pair added so far visible to the joins. */
  commit(): void {
    this.committed = this.pairs.length;
  }

  /** The end of the committed part of `pairs`. */
  get end(): number {
    return this.committed;
  }

  objectsOf(s: number): readonly number[] | undefined {
    return this.bySubject.get(s, this.pairs, this.committed);
  }

  subjectsOf(o: number): readonly number[] | undefined {
    return this.byObject.get(o, this.pairs, this.committed);
  }
}

/**
 * Subject -> objects (or object -> subjects) of one relation, brought up to date when read: an
 * index only the first round reads (a premise whose predicate no rule derives) is not kept
 * up to date through the half a million triples of the later rounds.
 */
class Index {
  private readonly map = new Map<number, number[]>();
  private indexed = 0;

  constructor(private readonly keyAt: 0 | 1) {}

  get(key: number, pairs: readonly number[], end: number): readonly number[] | undefined {
    const { map, keyAt } = this;
    for (let at = this.indexed; at < end; at += 2) push(map, pairs[at + keyAt] as number, pairs[at + 1 - keyAt] as number);
    this.indexed = end;
    return map.get(key);
  }
}

function push(map: Map<number, number[]>, key: number, value: number): void {
  const values = map.get(key);
  if (values === undefined) map.set(key, [value]);
  else values.push(value);
}

/**
 * A position of a compiled pattern: a constant term, a variable bound by an earlier pattern,
 * a variable this pattern binds, or a repeat of one this pattern binds (`?x p ?x`).
 */
const enum Kind {
  Constant,
  Bound,
  Free,
  Repeat,
}

interface Position {
  readonly kind: Kind;
  /** The term number of a constant, else the variable's slot. */
  readonly value: number;
}

interface Step {
  readonly s: Position;
  readonly p: Position;
  readonly o: Position;
  /** The relation of a constant predicate, found once. */
  readonly relation: Relation | undefined;
}

/** One way to run a rule: match `first` against the new triples, then join `rest` in order and conclude. */
interface Plan {
  /** The rule's index in the list forwardChain was given. */
  readonly rule: number;
  readonly first: Step;
  readonly rest: readonly Step[];
  readonly conclusion: readonly Step[];
  readonly slots: number;
}

/**
 * The closure of `quads` under `rules` (Horn rules as classifyRules reads them: basic graph
 * patterns, no built-ins): every triple stated or derived, each once. Terms are numbered
 * once, by their N3.js id, blank nodes of the input first turned into the reserved IRIs
 * writeN3p hands EYE (so both engines derive, and refuse, the same terms), and joins compare
 * numbers. Each round joins the triples new in the last round, at one premise, with
 * everything known at the others (semi-naive evaluation), until a round adds nothing: every
 * link between rules is followed, whatever order the rules come in.
 */
export function forwardChain(quads: Iterable<Quad>, rules: readonly HornRule[], options: { readonly trace?: boolean } = {}): Closure {
  return new Closure(quads, rules, options.trace === true);
}

/**
 * Why a triple is in a closure: stated (given to forwardChain), or derived by rule number
 * `rule` from `premises`, each of which was in the closure before it (the first derivation
 * found, so following premises always ends at stated triples).
 */
export type Justification =
  { readonly kind: 'stated' } | { readonly kind: 'derived'; readonly rule: number; readonly premises: readonly Quad[] };

/** A closure computed by forwardChain: its terms by number and its triples by predicate. */
export class Closure {
  /** Term number -> term. */
  readonly terms: ClosureTerm[] = [];
  private readonly numbers = new Map<string, number>();
  private readonly relations = new Map<number, Relation>();
  /** With tracing on: per derived triple (`p s o` numbers), the plan and bindings that first derived it. */
  private readonly derivations: Map<string, { readonly plan: Plan; readonly bindings: Int32Array }> | undefined;

  constructor(quads: Iterable<Quad>, rules: readonly HornRule[], trace = false) {
    if (trace) this.derivations = new Map();
    for (const quad of quads) this.state(quad);
    const plans = rules.flatMap((rule, index) => this.plan(rule, index));
    this.run(plans);
  }

  /**
   * Why the triple is in the closure, or undefined when it is not. Derivations are known only
   * when forwardChain ran with `trace` (operator tools: `check --why`); without it a derived
   * triple reads as stated.
   */
  justify(subject: Term, predicate: Term, object: Term): Justification | undefined {
    const [s, p, o] = [subject, predicate, object].map((term) =>
      this.numbers.get(term.termType === 'BlankNode' ? skolemIri(term.value) : term.id),
    );
    if (s === undefined || p === undefined || o === undefined || this.relations.get(p)?.has(s, o) !== true) return undefined;
    const found = this.derivations?.get(`${p} ${s} ${o}`);
    if (found === undefined) return { kind: 'stated' };
    const { plan, bindings } = found;
    const premises = [plan.first, ...plan.rest].map(({ s: ps, p: pp, o: po }) =>
      DataFactory.quad(
        this.terms[valueOf(ps, bindings)] as Quad['subject'],
        this.terms[valueOf(pp, bindings)] as Quad['predicate'],
        this.terms[valueOf(po, bindings)] as Quad['object'],
      ),
    );
    return { kind: 'derived', rule: plan.rule, premises };
  }

  /** The number of a term, numbering it when new. */
  number(term: Term): number {
    const id = term.termType === 'BlankNode' ? skolemIri(term.value) : term.id;
    let number = this.numbers.get(id);
    if (number === undefined) {
      number = this.terms.length;
      this.numbers.set(id, number);
      this.terms.push((term.termType === 'BlankNode' ? DataFactory.namedNode(id) : term) as ClosureTerm);
    }
    return number;
  }

  /** The (subject, object) pairs of a predicate, flat: s0, o0, s1, o1, ... (empty when none). */
  pairsOf(predicate: string): readonly number[] {
    const number = this.numbers.get(predicate);
    return (number === undefined ? undefined : this.relations.get(number)?.pairs) ?? [];
  }

  /** Every triple, as quads in the default graph. */
  quads(): Quad[] {
    const quads: Quad[] = [];
    for (const [predicate, relation] of this.relations) {
      const p = this.terms[predicate] as Quad['predicate'];
      const { pairs } = relation;
      for (let at = 0; at < pairs.length; at += 2) {
        quads.push(
          DataFactory.quad(this.terms[pairs[at] as number] as Quad['subject'], p, this.terms[pairs[at + 1] as number] as Quad['object']),
        );
      }
    }
    return quads;
  }

  /** How many triples the closure holds. */
  get size(): number {
    let size = 0;
    for (const relation of this.relations.values()) size += relation.pairs.length / 2;
    return size;
  }

  private state(quad: Quad): void {
    this.relation(this.number(quad.predicate)).add(this.number(quad.subject), this.number(quad.object));
  }

  private relation(predicate: number): Relation {
    let relation = this.relations.get(predicate);
    if (relation === undefined) {
      relation = new Relation();
      this.relations.set(predicate, relation);
    }
    return relation;
  }

  /** One plan per premise: that premise matched against the new triples, the others joined most-bound first. */
  private plan(rule: HornRule, index: number): Plan[] {
    const slots = new Map<string, number>();
    const slotOf = (name: string) => {
      let slot = slots.get(name);
      if (slot === undefined) {
        slot = slots.size;
        slots.set(name, slot);
      }
      return slot;
    };
    const terms = (quad: Quad) => [quad.subject, quad.predicate, quad.object];
    /** Compiles a pattern given the variables bound before it; adds its own to `bound`. */
    const compile = (quad: Quad, bound: Set<string>): Step => {
      const own = new Set<string>();
      const [s, p, o] = terms(quad).map((term): Position => {
        if (term.termType !== 'Variable') return { kind: Kind.Constant, value: this.number(term) };
        const slot = slotOf(term.value);
        if (bound.has(term.value)) return { kind: Kind.Bound, value: slot };
        if (own.has(term.value)) return { kind: Kind.Repeat, value: slot };
        own.add(term.value);
        return { kind: Kind.Free, value: slot };
      }) as [Position, Position, Position];
      for (const name of own) bound.add(name);
      return { s, p, o, relation: p.kind === Kind.Constant ? this.relation(p.value) : undefined };
    };
    return rule.premise.map((first, at) => {
      const bound = new Set<string>();
      const start = compile(first, bound);
      const left = rule.premise.filter((_, other) => other !== at);
      const rest: Step[] = [];
      while (left.length > 0) {
        // Most positions known first (subject and object count double), so each join is a lookup.
        const known = (term: Term) => term.termType !== 'Variable' || bound.has(term.value);
        const score = (quad: Quad) => (known(quad.subject) ? 2 : 0) + (known(quad.object) ? 2 : 0) + (known(quad.predicate) ? 1 : 0);
        let best = 0;
        left.forEach((quad, index) => {
          if (score(quad) > score(left[best] as Quad)) best = index;
        });
        const [next] = left.splice(best, 1) as [Quad];
        rest.push(compile(next, bound));
      }
      const conclusion = rule.conclusion.map((quad) => compile(quad, new Set(slots.keys())));
      return { rule: index, first: start, rest, conclusion, slots: slots.size };
    });
  }

  private run(plans: readonly Plan[]): void {
    // Round 0 sees every stated triple as new.
    let fresh = new Map<number, [number, number]>();
    for (const [predicate, relation] of this.relations) {
      relation.commit();
      fresh.set(predicate, [0, relation.end]);
    }
    while (fresh.size > 0) {
      for (const plan of plans) this.runPlan(plan, fresh);
      const next = new Map<number, [number, number]>();
      for (const [predicate, relation] of this.relations) {
        const from = relation.end;
        relation.commit();
        if (relation.end > from) next.set(predicate, [from, relation.end]);
      }
      fresh = next;
    }
  }

  /** Matches the plan's first premise against the new triples of each predicate, the rest against all committed ones. */
  private runPlan(plan: Plan, fresh: ReadonlyMap<number, readonly [number, number]>): void {
    const bindings = new Int32Array(plan.slots);
    const { first } = plan;
    const scan = (p: number, relation: Relation, from: number, to: number) => {
      const { pairs } = relation;
      for (let at = from; at < to; at += 2) {
        if (matches(first, pairs[at] as number, p, pairs[at + 1] as number, bindings)) this.join(plan, 0, bindings);
      }
    };
    if (first.p.kind === Kind.Constant) {
      const range = fresh.get(first.p.value);
      const relation = this.relations.get(first.p.value);
      if (range !== undefined && relation !== undefined) scan(first.p.value, relation, range[0], range[1]);
      return;
    }
    for (const [p, [from, to]] of fresh) scan(p, this.relations.get(p) as Relation, from, to);
  }

  private join(plan: Plan, at: number, bindings: Int32Array): void {
    const step = plan.rest[at];
    if (step === undefined) {
      for (const { s, p, o, relation } of plan.conclusion) {
        const added = (relation ?? this.relation(valueOf(p, bindings))).add(valueOf(s, bindings), valueOf(o, bindings));
        if (added && this.derivations !== undefined) {
          this.derivations.set(`${valueOf(p, bindings)} ${valueOf(s, bindings)} ${valueOf(o, bindings)}`, {
            plan,
            bindings: bindings.slice(),
          });
        }
      }
      return;
    }
    if (step.p.kind === Kind.Free) {
      for (const [p, relation] of this.relations) this.joinIn(plan, at, step, p, relation, bindings);
      return;
    }
    const p = valueOf(step.p, bindings);
    const relation = step.relation ?? this.relations.get(p);
    if (relation !== undefined) this.joinIn(plan, at, step, p, relation, bindings);
  }

  /** Joins one step against one predicate's committed triples, by lookup when its subject or object is known. */
  private joinIn(plan: Plan, at: number, step: Step, p: number, relation: Relation, bindings: Int32Array): void {
    const sKnown = step.s.kind === Kind.Constant || step.s.kind === Kind.Bound;
    const oKnown = step.o.kind === Kind.Constant || step.o.kind === Kind.Bound;
    if (sKnown && oKnown) {
      const s = valueOf(step.s, bindings);
      const o = valueOf(step.o, bindings);
      if (relation.has(s, o) && matches(step, s, p, o, bindings)) this.join(plan, at + 1, bindings);
    } else if (sKnown) {
      const s = valueOf(step.s, bindings);
      for (const o of relation.objectsOf(s) ?? []) if (matches(step, s, p, o, bindings)) this.join(plan, at + 1, bindings);
    } else if (oKnown) {
      const o = valueOf(step.o, bindings);
      for (const s of relation.subjectsOf(o) ?? []) if (matches(step, s, p, o, bindings)) this.join(plan, at + 1, bindings);
    } else {
      const { pairs, end } = relation;
      for (let i = 0; i < end; i += 2) {
        if (matches(step, pairs[i] as number, p, pairs[i + 1] as number, bindings)) this.join(plan, at + 1, bindings);
      }
    }
  }
}

function valueOf(position: Position, bindings: Int32Array): number {
  return position.kind === Kind.Constant ? position.value : (bindings[position.value] as number);
}

/**
 * Whether the triple fits the step, binding the step's free variables to it. A free slot is
 * read only by later steps, so a failed match needs nothing undone.
 */
function matches(step: Step, s: number, p: number, o: number, bindings: Int32Array): boolean {
  return fits(step.s, s, bindings) && fits(step.p, p, bindings) && fits(step.o, o, bindings);
}

function fits(position: Position, term: number, bindings: Int32Array): boolean {
  switch (position.kind) {
    case Kind.Constant:
      return position.value === term;
    case Kind.Bound:
    case Kind.Repeat:
      return bindings[position.value] === term;
    case Kind.Free:
      bindings[position.value] = term;
      return true;
  }
}
