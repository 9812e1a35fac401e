// The warnings of `check` about operator rules: each kind fires on its case and stays quiet on the shipped examples.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Parser } from 'n3';
import { classifyRules } from '../../src/policy/rules/classify-rules.js';
import { warnAboutRules } from '../../src/policy/rules/warn-about-rules.js';

const PREFIXES =
  '@prefix guard: <https://w3id.org/sparql-guard#>. @prefix groups: <https://example.org/groups#>. @prefix coll: <https://example.org/graph-collections#>. @prefix ex: <https://example.org/>.\n';
const DATA = new Parser().parse(
  `${PREFIXES}ex:p a guard:Policy; guard:group "g"; coll:readCollection ex:c. ex:g1 coll:inCollection ex:c. ex:alice groups:memberOf "g".`,
);
const warn = (...texts: string[]) =>
  warnAboutRules(
    DATA,
    texts.map((text) => classifyRules(`${PREFIXES}${text}`)),
    texts.map((_, index) => `rule-${index}.n3`),
    new Set(),
  );

describe('warnAboutRules', () => {
  it('says nothing about the example rule files over data they can use', () => {
    const files = [
      'rules/examples/group-hierarchy.n3',
      'policies/examples/group-hierarchy.n3',
      'rules/examples/group-membership.n3',
      'rules/examples/graph-collections.n3',
    ];
    const readings = files.map((file) => classifyRules(readFileSync(resolve(file), 'utf8')));
    assert.deepEqual(warnAboutRules(DATA, readings, files, new Set()), []);
  });

  it('warns about a rule that cannot fire, and not when another rule derives its predicate', () => {
    assert.match(
      warn('{ ?p ex:never ?x } => { ?p guard:appliesTo ?x }.').join('\n'),
      /rule-0\.n3: rule 1 .* cannot fire: no triple, fact or rule has <https:\/\/example\.org\/never>/,
    );
    assert.deepEqual(warn('{ ?p ex:never ?x } => { ?p guard:appliesTo ?x }.', '{ ?p guard:group ?g } => { ?p ex:never ?g }.'), []);
  });

  it('warns about derived triples the loader ignores or refuses', () => {
    assert.match(
      warn('{ ?p guard:group ?g } => { ?p ex:granted ?g }.').join('\n'),
      /derives <https:\/\/example\.org\/granted>, which no rule reads/,
    );
    assert.match(
      warn('{ ?p guard:group ?g } => { ?p guard:grantsGraph "not an IRI" }.').join('\n'),
      /derives a graph that is not an IRI: the load will be refused/,
    );
    assert.match(warn('{ ?p guard:group ?g } => { ?p guard:grantsGraph <urn:x-sparql-guard:empty> }.').join('\n'), /reserved graph IRI/);
    assert.match(
      warn('{ ?p guard:group ?g } => { ?p guard:appliesTo "x"@en }.').join('\n'),
      /principal that is neither an IRI nor a group name/,
    );
  });

  it('warns about a rule whose cost is the square of the policies', () => {
    assert.match(
      warn('{ ?a guard:group ?x. ?b guard:readGraph ?y } => { ?a guard:grantsGraph ?y }.').join('\n'),
      /costs the square of the policies: .* share no variable/,
    );
    assert.match(
      warn('{ ?a guard:grantsGraph ?g. ?b guard:grantsGraph ?g } => { ?a guard:appliesTo "peers" }.').join('\n'),
      /costs the square of the policies: .* join only on their objects/,
    );
    // A join through the policy itself is linear.
    assert.deepEqual(warn('{ ?a guard:group ?x. ?a coll:readCollection ?c } => { ?a guard:appliesTo ?x }.'), []);
  });
});
