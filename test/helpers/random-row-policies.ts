// Policy sets drawn at random for the rows oracles (row rules, column lists, hidden paths, several policies per graph,
// lifts, grants by agent, group and AuthenticatedAgent), with an unrestricted keeper per caller of the same graphs.

import { ROWS_CALLERS, ROWS_EX, AGENTS, type RowsCallerName } from './rows-stores.js';
import { grantedGraphs, readRowPolicies } from './row-view.js';

export const CALLERS: readonly RowsCallerName[] = ['alice', 'pub', 'bob', 'cat', 'dan', 'erin'];
const PREDICATES = [
  'rdf:type',
  'ex:name',
  'ex:budget',
  'ex:team',
  'ex:region',
  'ex:lead',
  'ex:note',
  'ex:text',
  'ex:email',
  'ex:phone',
  'ex:salary',
];

/** Row rules as a policy file writes them: the rule's terms, and whether it reads graphs of its own. */
const ROW_RULES: readonly string[] = [
  'guard:rowClass ex:Project',
  'guard:rowClass ex:PublicRecord',
  'guard:rowClass ex:Person',
  'guard:rowClass ex:Draft',
  'guard:rowPattern "?this ex:member ?agent" ; guard:rowData g:members',
  'guard:rowPattern "?this ex:member ?agent"',
  'guard:rowPattern "?this ex:team ?group"',
  'guard:rowPattern "?this ex:region \'north\'"',
  'guard:rowPattern "?this ex:budget ?b . VALUES ?b { 100 5 3 12 }"',
  'guard:rowPattern "?this ex:owner ?org . ?agent ex:memberOf ?org" ; guard:rowData g:members, g:orgs',
  'guard:rowPattern "?this ex:lead ?l . ?l ex:team \'team-a\'"',
  'guard:rowPattern "?this ex:note ?n"',
  'guard:rowPattern "?x ex:lead ?this"',
  "guard:rowPattern \"?this ex:name ?n . VALUES ?n { 'Apollo' 'Alice' 'Second public' }\"",
  'guard:rowPattern "?this a ex:Project ; ex:team ?group"',
  'guard:rowPattern "?this ex:name ?n" ; guard:rowData g:second',
  'guard:rowPattern "?this a ex:Project" ; guard:rowData g:orgs',
  'guard:rowPattern "?this a ?t . VALUES ?t { ex:Project ex:Draft }"',
  'guard:rowPattern "?this ex:note ?n . ?n ex:team \'team-b\'"',
  'guard:rowPattern "?this ex:lead ?l . ?l ex:salary ?s ."',
  "guard:rowPattern \"?this ex:budget ?b . VALUES (?b ?c) { (100 'x') (5 UNDEF) (3 'y'@en) }\"",
];

/** One policy set drawn with `random`: one to three policies per caller, and now and then one for every authenticated agent. */
export function randomPolicies(random: () => number, base: string): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const some = <T>(items: readonly T[], most: number): T[] => items.filter(() => random() < most / items.length);
  const policy = (name: string, target: string): string => {
    const graphs = pick([['g:main'], ['g:second'], ['g:main', 'g:second'], ['g:main'], ['g:main', 'g:members'], ['g:orgs', 'g:second']]);
    const terms = [`a guard:Policy`, target, `guard:readGraph ${graphs.join(', ')}`];
    if (random() < 0.6) terms.push(pick(ROW_RULES));
    if (random() < 0.45) terms.push(`guard:readPath ${[...new Set([pick(PREDICATES), ...some(PREDICATES, 3)])].join(', ')}`);
    if (random() < 0.3) terms.push(`guard:hidePath ${[...new Set([pick(PREDICATES), ...some(PREDICATES, 1)])].join(', ')}`);
    return `pol:${name} ${terms.join(' ;\n    ')} .`;
  };
  const policies = CALLERS.flatMap((caller) => {
    const { agent, groups } = ROWS_CALLERS[caller];
    const targets = [`guard:agent <${agent}>`, ...groups.map((group) => `guard:group "${group}"`)];
    return Array.from({ length: 1 + Math.floor(random() * 3) }, (_, index) => policy(`${caller}-${index}`, pick(targets)));
  });
  if (random() < 0.3) policies.push(policy('everyone-signed-in', 'guard:agent guard:AuthenticatedAgent'));
  const text = (more: readonly string[]) =>
    [
      '@prefix guard: <https://w3id.org/sparql-guard#> .',
      '@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .',
      `@prefix ex: <${ROWS_EX}> .`,
      `@prefix g: <${base}> .`,
      '@prefix pol: <http://example.org/policies/random/> .',
      '',
      ...policies,
      ...more,
      '',
    ].join('\n');
  // Each caller's keeper reads the same graphs unrestricted: on a lab store, an answer of the keeper's that is not the
  // data's is the store's own deviation, not compared.
  const drawn = readRowPolicies(text([]));
  return text(
    CALLERS.map((caller) => {
      const graphs = grantedGraphs(drawn, ROWS_CALLERS[caller]).map((graph) => `<${graph}>`);
      return `pol:keeper-${caller} a guard:Policy ; guard:agent <${keeperOf(caller).agent}> ; guard:readGraph ${graphs.join(', ')} .`;
    }),
  );
}

/** The unrestricted caller of `caller`'s graphs. */
export const keeperOf = (caller: RowsCallerName) => ({
  agent: `${AGENTS}keeper-${caller}`,
  key: `rows-key-keeper-${caller}-0123456789abcdef`,
});
