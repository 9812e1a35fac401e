// Proves the limit terms of policies (guard:timeoutMs, guard:resultLimit, guard:maxConcurrent): read from real files, checked, and composed per caller as the largest.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Caller } from '../../src/auth/caller.js';
import { ANONYMOUS_AGENT } from '../../src/vocabulary.js';
import { grantFor } from '../../src/policy/grant.js';
import { loadPolicies } from '../helpers/load-policies.js';
import { PolicyLoadError } from '../../src/policy/policy-load-error.js';
import { shippedRuleFiles } from '../../src/policy/rules/shipped-rule-files.js';

const EX = 'https://example.org/';
const load = (file: string) => loadPolicies({ policyFiles: [file], ruleFiles: shippedRuleFiles() });
const caller = (agent: string, groups: string[] = []): Caller => ({ agent, groups, authenticated: agent !== ANONYMOUS_AGENT });

describe('limits per caller from policies', () => {
  it('reads each limit and gives a caller, per kind, the largest among its policies that set it', async () => {
    const set = await load(resolve('test/fixtures/policy/limits/tiers.ttl'));
    assert.deepEqual(set.policies.find((p) => p.iri === `${EX}public`)?.limits, { timeoutMs: 2000, resultLimit: 100, maxConcurrent: 2 });
    assert.deepEqual(set.policies.find((p) => p.iri === `${EX}plain`)?.limits, {});
    assert.deepEqual(grantFor(set, caller(ANONYMOUS_AGENT))?.limits, { timeoutMs: 2000, resultLimit: 100, maxConcurrent: 2 });
    assert.deepEqual(grantFor(set, caller(`${EX}bob`, ['staff']))?.limits, { timeoutMs: 30000, resultLimit: 10000, maxConcurrent: 2 });
    // alice's own policy sets a smaller resultLimit than Everyone's: the larger one still wins.
    assert.deepEqual(grantFor(set, caller(`${EX}alice`))?.limits, { timeoutMs: 2000, resultLimit: 100, maxConcurrent: 8 });
    assert.deepEqual(grantFor(set, caller(`${EX}alice`, ['staff', 'plain']))?.limits, {
      timeoutMs: 30000,
      resultLimit: 10000,
      maxConcurrent: 8,
    });
  });

  describe('refuses a bad limit, naming the policy', () => {
    const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-policy-limits-'));
    after(() => rmSync(folder, { recursive: true, force: true }));
    const cases: [string, RegExp][] = [
      [
        'guard:timeoutMs 0',
        /guard:timeoutMs must be a whole number from 1 to 2147483647, found literal "0"\^\^<http:\/\/www\.w3\.org\/2001\/XMLSchema#integer>/,
      ],
      ['guard:timeoutMs 1.5', /guard:timeoutMs must be a whole number from 1 to 2147483647, found literal "1\.5"/],
      ['guard:resultLimit "100"', /guard:resultLimit must be a whole number from 1 to 2147483647, found literal "100"$/],
      ['guard:maxConcurrent -1', /guard:maxConcurrent must be a whole number/],
      ['guard:resultLimit 99999999999', /guard:resultLimit must be a whole number/],
      ['guard:timeoutMs 10, 20', /guard:timeoutMs is given 2 times \(give one value\)/],
      [
        'guard:maxConcurrent <https://example.org/many>',
        /guard:maxConcurrent must be a whole number from 1 to 2147483647, found <https:\/\/example\.org\/many>/,
      ],
    ];
    for (const [triple, pattern] of cases) {
      it(triple, async () => {
        const file = join(folder, `${cases.findIndex(([t]) => t === triple)}.ttl`);
        writeFileSync(
          file,
          `@prefix guard: <https://w3id.org/sparql-guard#> .\n<${EX}p> a guard:Policy ; guard:agent guard:Everyone ; guard:readGraph <${EX}g> ; ${triple} .\n`,
        );
        await assert.rejects(load(file), (error: unknown) => {
          assert.ok(error instanceof PolicyLoadError, String(error));
          assert.match(error.message, pattern);
          assert.ok(error.message.includes(`${EX}p`), 'names the policy');
          return true;
        });
      });
    }
    it('a limit on something that is not a policy', async () => {
      const file = join(folder, 'stray.ttl');
      writeFileSync(file, `@prefix guard: <https://w3id.org/sparql-guard#> .\n<${EX}x> guard:resultLimit 5 .\n`);
      await assert.rejects(load(file), /uses guard:resultLimit but is not declared a guard:Policy/);
    });
  });
});
