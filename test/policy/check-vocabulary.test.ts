// The closed policy vocabulary: a typo of any term, in a policy file or a rule file, fails the load with the nearest term; a reload with one keeps the set in force.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Parser } from 'n3';
import { checkVocabulary } from '../../src/policy/check-vocabulary.js';
import { createPolicyWorker } from '../../src/policy/load/create-policy-worker.js';
import { loadPolicySet, loadPolicySetWithStats } from '../../src/policy/load/load-policy-set.js';
import { shippedRuleFiles } from '../../src/policy/rules/shipped-rule-files.js';
import { GUARD, VOCABULARY_TERMS, type TermKind } from '../../src/vocabulary.js';
import { BIN, explainAnonymous, listeningUrl, makeFolder, spawnGuard, type SpawnedGuard } from '../helpers/spawn-guard.js';
import { spawnSync } from 'node:child_process';

const PREFIXES = '@prefix guard: <https://w3id.org/sparql-guard#>. @prefix ex: <https://example.org/>.\n';

/** Three typos of a term: its first letter's case changed, one letter dropped, one letter doubled. */
function typosOf(term: string): string[] {
  const first = term[0]!;
  const flipped = (first === first.toLowerCase() ? first.toUpperCase() : first.toLowerCase()) + term.slice(1);
  const middle = Math.floor(term.length / 2);
  const dropped = term.slice(0, middle) + term.slice(middle + 1);
  const doubled = term.slice(0, middle) + term[middle]! + term.slice(middle);
  return [flipped, dropped, doubled];
}

/** A policy that puts `name` where a term of `kind` stands. */
function policyUsing(name: string, kind: Exclude<TermKind, 'description'>): string {
  const base = 'ex:p a guard:Policy; guard:agent guard:Everyone; guard:readGraph ex:g';
  switch (kind) {
    case 'class':
      return `${PREFIXES}ex:p a guard:${name}; guard:agent guard:Everyone; guard:readGraph ex:g.`;
    case 'property':
      return `${PREFIXES}${base}; guard:${name} ex:x.`;
    case 'principal':
      return `${PREFIXES}ex:p a guard:Policy; guard:agent guard:${name}; guard:readGraph ex:g.`;
  }
}

/** The policy of the report: it loaded, and everyone read every salary with no cap on rows. */
const SALARY_POLICY = `@prefix guard: <https://w3id.org/sparql-guard#>.
<http://x/p1> a guard:Policy ; guard:agent guard:Everyone ;
    guard:readGraph <https://example.org/graphs/people> ;
    guard:hidepath <https://example.org/salary> ; guard:resultlimit 5 .`;

const cases = Object.entries(VOCABULARY_TERMS)
  .filter((entry): entry is [string, Exclude<TermKind, 'description'>] => entry[1] !== 'description')
  .flatMap(([term, kind]) => typosOf(term).map((typo) => ({ term, kind, typo })));

describe('checkVocabulary', () => {
  it('generates typos that are no term', () => {
    assert.equal(cases.length, 3 * Object.values(VOCABULARY_TERMS).filter((kind) => kind !== 'description').length);
    for (const { typo } of cases) assert.ok(!Object.hasOwn(VOCABULARY_TERMS, typo), typo);
  });

  for (const { term, kind, typo } of cases) {
    it(`refuses guard:${typo} and suggests guard:${term}`, () => {
      const quads = new Parser().parse(policyUsing(typo, kind));
      assert.throws(
        () => checkVocabulary(quads, 'origin.ttl'),
        (error: Error) =>
          error.message.startsWith(`origin.ttl: guard:${typo} (`) && error.message.endsWith(`(did you mean guard:${term}?)`),
      );
    });
  }

  it('passes every term where its kind stands, and any IRI of another namespace', () => {
    for (const { term, kind } of cases) {
      checkVocabulary(new Parser().parse(`${policyUsing(term, kind)} ex:p ex:note guard:${term}; ex:comment "x".`), 'f');
    }
  });

  it('refuses a class as a predicate, a property or a principal as a class', () => {
    const refuse = (text: string, pattern: RegExp) =>
      assert.throws(() => checkVocabulary(new Parser().parse(`${PREFIXES}${text}`), 'f'), { message: pattern });
    refuse('ex:p guard:Policy ex:x.', /^f: guard:Policy \(as a predicate of <https:\/\/example\.org\/p>\) is a class, not a property$/);
    refuse('ex:p a guard:readGraph.', /^f: guard:readGraph \(as the class of <https:\/\/example\.org\/p>\) is a property, not a class$/);
    refuse('ex:p guard:Everyone ex:x.', /is a principal, not a property$/);
    refuse(
      'ex:p guard:caller ex:x.',
      /guard:caller \(as a predicate of <https:\/\/example\.org\/p>\) is a term of the service description, not of policies or rules$/,
    );
  });

  it('refuses a misspelt namespace, the namespace itself and a datatype of the namespace', () => {
    const refuse = (text: string, pattern: RegExp) =>
      assert.throws(() => checkVocabulary(new Parser().parse(text), 'f'), { message: pattern });
    refuse(
      '<https://example.org/p> a <http://w3id.org/sparql-guard#Policy>.',
      /did you mean <https:\/\/w3id\.org\/sparql-guard#Policy>\?\)$/,
    );
    refuse(
      '<https://example.org/p> <https://w3id.org/sparql-guard/readGraph> <https://example.org/g>.',
      /did you mean <https:\/\/w3id\.org\/sparql-guard#readGraph>\?/,
    );
    // A prefix declared without its #, with www., or with _ for -: each term fell outside the namespace, unchecked.
    refuse(
      '<https://example.org/p> <https://w3id.org/sparql-guardreadGraph> <https://example.org/g>.',
      /^f: <https:\/\/w3id\.org\/sparql-guardreadGraph> \(as a predicate of <https:\/\/example\.org\/p>\) is not in the namespace of the policy vocabulary \(did you mean <https:\/\/w3id\.org\/sparql-guard#readGraph>\?\)$/,
    );
    refuse(
      '<https://example.org/p> <https://www.w3id.org/sparql-guard#hidePath> <https://example.org/s>.',
      /did you mean <https:\/\/w3id\.org\/sparql-guard#hidePath>\?\)$/,
    );
    refuse(
      '<https://example.org/p> a <https://w3id.org/sparql_guard#Policy>.',
      /did you mean <https:\/\/w3id\.org\/sparql-guard#Policy>\?\)$/,
    );
    refuse(
      `<https://example.org/p> <https://example.org/q> <${GUARD}>.`,
      /guard: \(as an object\) is not a term of the policy vocabulary \(the terms are guard:Policy, /,
    );
    refuse(`<https://example.org/p> <https://example.org/q> "1"^^<${GUARD}int>.`, /guard:int \(as a datatype\)/);
  });

  it('checks the triples inside N3 formulas', () => {
    const rule = new Parser({ format: 'text/n3' }).parse(`${PREFIXES}{ ?p guard:group ?g } => { ?p guard:appliesto ?g }.`);
    assert.throws(() => checkVocabulary(rule, 'r.n3'), {
      message: /^r\.n3: guard:appliesto \(as a predicate of \?p\) is not a term .*did you mean guard:appliesTo\?\)$/,
    });
  });
});

describe('loadPolicySet with a term misspelt', () => {
  let folder: string;
  before(() => {
    folder = mkdtempSync(join(tmpdir(), 'sparql-guard-vocabulary-'));
  });
  after(() => rmSync(folder, { recursive: true, force: true }));

  it('refuses the policy of the report: guard:hidepath and guard:resultlimit would have been ignored', async () => {
    const file = join(folder, 'salary.ttl');
    writeFileSync(file, SALARY_POLICY);
    await assert.rejects(loadPolicySet({ policyFiles: [file], ruleFiles: shippedRuleFiles() }), {
      message: `${file}: guard:hidepath (as a predicate of <http://x/p1>) is not a term of the policy vocabulary (did you mean guard:hidePath?)`,
    });
  });

  it('makes `sparql-guard check` exit 1 with that line, where it printed ok', () => {
    const file = join(folder, 'salary.ttl');
    writeFileSync(file, SALARY_POLICY);
    const config = join(folder, 'guard.json');
    writeFileSync(config, JSON.stringify({ upstream: 'http://127.0.0.1:1/sparql', policies: [file] }));
    const run = spawnSync(process.execPath, [BIN, 'check', '--config', config], { encoding: 'utf8' });
    assert.equal(run.status, 1);
    assert.doesNotMatch(run.stdout, /^ok/m);
    assert.match(
      run.stderr,
      /guard:hidepath \(as a predicate of <http:\/\/x\/p1>\) is not a term of the policy vocabulary \(did you mean guard:hidePath\?\)/,
    );
  });

  it('refuses a typo of every term in a policy file, naming the file, the typo and the term', async () => {
    // One worker for every load, as a serving guard keeps one: a thread started per load would be most of the time.
    const worker = createPolicyWorker();
    try {
      for (const [index, { term, kind, typo }] of cases.entries()) {
        const file = join(folder, `typo-${index}.ttl`);
        writeFileSync(file, policyUsing(typo, kind));
        await assert.rejects(loadPolicySetWithStats({ policyFiles: [file], ruleFiles: shippedRuleFiles() }, { worker }), (error: Error) => {
          assert.ok(error.message.startsWith(`${file}: guard:${typo} (`), error.message);
          assert.ok(error.message.endsWith(`(did you mean guard:${term}?)`), error.message);
          assert.doesNotMatch(error.message, /\n/);
          return true;
        });
      }
    } finally {
      await worker.close();
    }
  });

  it('refuses a typo of a term in a rule file, naming the rule file', async () => {
    const policies = join(folder, 'ok.ttl');
    writeFileSync(policies, policyUsing('Everyone', 'principal'));
    const rules = join(folder, 'typo.n3');
    writeFileSync(rules, `${PREFIXES}{ ?p guard:group ?g } => { ?p guard:grantGraph ex:g }.`);
    await assert.rejects(loadPolicySet({ policyFiles: [policies], ruleFiles: [...shippedRuleFiles(), rules] }), {
      message: `${rules}: guard:grantGraph (as a predicate of ?p) is not a term of the policy vocabulary (did you mean guard:grantsGraph?)`,
    });
  });

  it('refuses a wrong kind of value, naming the file, the policy and the term', async () => {
    const wrong: [string, RegExp][] = [
      ['guard:readGraph "https://example.org/g"', /guard:readGraph must be an IRI, found literal/],
      ['guard:hidePath "salary"', /guard:hidePath must be an IRI, found literal "salary"$/],
      ['guard:agent "alice"', /guard:agent must be an IRI, found literal "alice"$/],
      ['guard:resultLimit 2.5', /guard:resultLimit must be a whole number from 1 to \d+, found literal "2\.5"/],
      ['guard:timeoutMs "100"', /guard:timeoutMs must be a whole number/],
      ['guard:maxConcurrent ex:two', /guard:maxConcurrent must be a whole number/],
      ['guard:agent guard:readGraph', /guard:readGraph is not a principal/],
      ['guard:agent guard:Policy', /guard:Policy is not a principal/],
    ];
    for (const [index, [triple, pattern]] of wrong.entries()) {
      const file = join(folder, `wrong-${index}.ttl`);
      writeFileSync(file, `${PREFIXES}ex:p a guard:Policy; guard:group "g"; ${triple}.`);
      await assert.rejects(loadPolicySet({ policyFiles: [file], ruleFiles: shippedRuleFiles() }), (error: Error) => {
        assert.ok(error.message.startsWith(`${file}: policy <https://example.org/p>: `), error.message);
        assert.match(error.message, pattern);
        return true;
      });
    }
  });
});

describe('reload with a term misspelt (the real bin, SIGHUP)', () => {
  let folder: ReturnType<typeof makeFolder>;
  let guard: SpawnedGuard;
  let url: string;
  let policyFile: string;
  const good = `${PREFIXES}ex:everyone a guard:Policy; guard:agent guard:Everyone; guard:readGraph ex:a.`;
  before(async () => {
    folder = makeFolder();
    policyFile = join(folder.folder, 'policies.ttl');
    writeFileSync(policyFile, good);
    guard = spawnGuard(folder.folder, { policies: [policyFile], explain: true });
    url = await listeningUrl(guard);
  });
  after(async () => {
    await guard.stop();
    folder.remove();
  });

  it('keeps the set in force for a typo of every term, and logs the line with the suggestion', async () => {
    const inForce = await explainAnonymous(url);
    assert.deepEqual(inForce.policies, ['<https://example.org/everyone>']);
    for (const { term, kind, typo } of cases) {
      writeFileSync(policyFile, policyUsing(typo, kind));
      const from = guard.lines.length;
      guard.child.kill('SIGHUP');
      const line = await guard.waitFor((entry) => entry.event === 'policies-reload-failed' || entry.event === 'policies-reloaded', from);
      assert.equal(line.event, 'policies-reload-failed', `guard:${typo}`);
      assert.equal(line.file, policyFile);
      assert.ok(String(line.error).endsWith(`(did you mean guard:${term}?)`), String(line.error));
    }
    assert.deepEqual(await explainAnonymous(url), inForce);
    writeFileSync(policyFile, good);
    const from = guard.lines.length;
    guard.child.kill('SIGHUP');
    assert.equal((await guard.waitFor((entry) => String(entry.event).startsWith('policies-reload'), from)).event, 'policies-reloaded');
  });
});
