// A reload compares the table it derives with the one in force: every change to what a policy grants must count as a change.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadPolicySetWithStats, reloadPolicySet } from '../../src/policy/load/load-policy-set.js';
import { createPolicyWorker } from '../../src/policy/load/create-policy-worker.js';
import { NO_POLICY_INPUTS } from '../../src/policy/store-reads/fetch-policy-inputs.js';
import { shippedRuleFiles } from '../../src/policy/rules/shipped-rule-files.js';

const HEAD = '@prefix guard: <https://w3id.org/sparql-guard#> .\n';
const OWN = '<https://example.org/policies/own> a guard:Policy ; guard:agent guard:AuthenticatedAgent';
const withTemplates = (...templates: string[]) =>
  `${HEAD}${OWN}${templates.map((text) => ` ;\n  guard:readGraphTemplate ${JSON.stringify(text)}`).join('')} .\n`;

describe('reloadPolicySet: a changed graph template is a changed set', () => {
  const folder = mkdtempSync(join(tmpdir(), 'sg-reload-digest-'));
  const file = join(folder, 'policies.ttl');
  const sources = { policyFiles: [file], ruleFiles: shippedRuleFiles() };
  const worker = createPolicyWorker();
  after(async () => {
    await worker.close();
    rmSync(folder, { recursive: true, force: true });
  });
  const templatesOf = (set: { policies: readonly { graphTemplates: readonly { text: string }[] }[] }) =>
    set.policies.flatMap((policy) => policy.graphTemplates.map((template) => template.text));

  it('swaps the set when a template is edited or removed, and only then keeps the set in force', async () => {
    writeFileSync(file, withTemplates('https://data.example.org/users/{group}/'));
    const first = await loadPolicySetWithStats(sources, { worker });
    assert.deepEqual(templatesOf(first.set), ['https://data.example.org/users/{group}/']);

    // The same file again: nothing to swap.
    const same = await reloadPolicySet(sources, NO_POLICY_INPUTS, first.digest, worker);
    assert.equal(same.set, undefined);

    // The template edited: the new one must apply.
    writeFileSync(file, withTemplates('https://data.example.org/people/{group}/'));
    const edited = await reloadPolicySet(sources, NO_POLICY_INPUTS, first.digest, worker);
    assert.ok(edited.set !== undefined, 'an edited template was taken for the set in force');
    assert.deepEqual(templatesOf(edited.set), ['https://data.example.org/people/{group}/']);
    assert.notEqual(edited.digest, first.digest);

    // The template removed (a revocation): no template may stay in force.
    writeFileSync(file, withTemplates());
    const removed = await reloadPolicySet(sources, NO_POLICY_INPUTS, edited.digest, worker);
    assert.ok(removed.set !== undefined, 'a removed template was taken for the set in force');
    assert.deepEqual(templatesOf(removed.set), []);
  });
});
