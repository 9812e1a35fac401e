// Generates organisation-shaped policy sets (groups in a hierarchy, members in RDF, graph collections) from a seed, for the differential test and bench/.

/** The shape of a generated set; every count is exact, every choice follows the seed. */
export interface PolicySetShape {
  readonly policies: number;
  /** Groups "g-0".."g-(n-1)"; each policy names one (policies / groups per group). */
  readonly groups: number;
  /** Each group but "g-0" is a subgroup of one of the groups before it, about this many levels deep. */
  readonly depth: number;
  /** Extra subGroupOf edges closing cycles (a group under one of its own subgroups). */
  readonly cycles: number;
  /** Share of the policies whose agent is declared a member of a random group in RDF. */
  readonly memberShare: number;
  /** Share of the policies that grant a collection instead of listing graphs. */
  readonly collectionShare: number;
  /** Graphs in each collection. */
  readonly collectionSize: number;
  readonly seed: number;
}

/** A generated set: the policy Turtle, and the hierarchy facts (N3: group names are literal subjects). */
export interface GeneratedPolicySet {
  readonly policyTurtle: string;
  readonly hierarchyN3: string;
}

/** The organisation of a larger operator: 500 groups about 9 levels deep, 20 policies each, a quarter members, a third collections of 25. */
export function organisationShape(policies: number, seed = 1): PolicySetShape {
  return {
    policies,
    groups: Math.max(1, Math.round(policies / 20)),
    depth: 9,
    cycles: 0,
    memberShare: 0.25,
    collectionShare: 1 / 3,
    collectionSize: 25,
    seed,
  };
}

const PREFIXES =
  '@prefix guard: <https://w3id.org/sparql-guard#>.\n@prefix groups: <https://example.org/groups#>.\n@prefix coll: <https://example.org/graph-collections#>.\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#>.\n@prefix ex: <https://example.org/>.\n';

/** Writes the set described by `shape`. */
export function generatePolicySet(shape: PolicySetShape): GeneratedPolicySet {
  const random = mulberry32(shape.seed);
  const pick = (n: number) => Math.floor(random() * n);

  // Groups in levels: level l holds about branching^l groups, each under a random group of level l - 1.
  const levels: number[][] = [[0]];
  const branching = Math.max(1.05, shape.groups ** (1 / Math.max(1, shape.depth - 1)));
  const hierarchy: string[] = [PREFIXES];
  for (let group = 1; group < shape.groups; group += 1) {
    let level = levels.length - 1;
    const current = levels[level] ?? [];
    if (current.length >= Math.ceil(branching ** level) && levels.length < shape.depth) {
      levels.push([]);
      level += 1;
    }
    (levels[level] ??= []).push(group);
    const parents = levels[level - 1] ?? [0];
    hierarchy.push(`"g-${group}" groups:subGroupOf "g-${parents[pick(parents.length)] ?? 0}".`);
  }
  for (let cycle = 0; cycle < shape.cycles && levels.length > 1; cycle += 1) {
    // An ancestor placed under a deeper group closes a cycle through the hierarchy.
    const deep = levels[levels.length - 1] ?? [0];
    const high = levels[pick(levels.length - 1)] ?? [0];
    hierarchy.push(`"g-${high[pick(high.length)] ?? 0}" groups:subGroupOf "g-${deep[pick(deep.length)] ?? 0}".`);
  }

  const collections = Math.max(1, Math.ceil((shape.policies * shape.collectionShare) / 30));
  const graphs = Math.max(collections * shape.collectionSize, shape.policies);
  const lines = [PREFIXES];
  for (let i = 0; i < shape.policies; i += 1) {
    const grants =
      random() < shape.collectionShare
        ? `coll:readCollection ex:collection-${pick(collections)}`
        : `guard:readGraph ex:graph-${pick(graphs)}, ex:graph-${pick(graphs)}`;
    const hide = i % 5 === 0 ? '; guard:hidePath ex:salary' : '';
    lines.push(
      `ex:policy-${i} a guard:Policy; rdfs:label "Policy ${i}"; guard:group "g-${i % shape.groups}"; guard:agent ex:agent-${i}; ${grants}${hide}.`,
    );
    if (random() < shape.memberShare) lines.push(`ex:agent-${i} groups:memberOf "g-${pick(shape.groups)}".`);
  }
  for (let collection = 0; collection < collections; collection += 1) {
    const members = Array.from({ length: shape.collectionSize }, () => `ex:graph-${pick(graphs)}`);
    lines.push(...members.map((graph) => `${graph} coll:inCollection ex:collection-${collection}.`));
  }
  return { policyTurtle: `${lines.join('\n')}\n`, hierarchyN3: `${hierarchy.join('\n')}\n` };
}

/** A small seeded generator (public-domain mulberry32), so every run writes the same set. */
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
