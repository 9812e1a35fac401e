// Unit tests: the policy holder's refusals (503 before the first load, 401 / 403 when no policy applies).

import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { ANONYMOUS_AGENT } from '../../src/vocabulary.js';
import { GuardError } from '../../src/guard-error.js';
import { loadPolicySet } from '../../src/policy/load/load-policy-set.js';
import { shippedRuleFiles } from '../../src/policy/rules/shipped-rule-files.js';
import { createPolicyHolder } from '../../src/server/policy-holder.js';

const anonymous = { agent: ANONYMOUS_AGENT, groups: [], authenticated: false };
const lonely = { agent: 'http://example.org/agents/lonely', groups: [], authenticated: true };

function statusOf(action: () => unknown): number | undefined {
  try {
    action();
  } catch (error) {
    assert.ok(error instanceof GuardError);
    return error.status;
  }
  return undefined;
}

describe('createPolicyHolder', () => {
  it('answers 503 until the first set is loaded, then grants under it', async () => {
    const holder = createPolicyHolder();
    assert.equal(holder.current(), undefined);
    assert.equal(
      statusOf(() => holder.grant(anonymous)),
      503,
    );
    holder.replace(
      await loadPolicySet({ policyFiles: [resolve('test/fixtures/integration/policies.ttl')], ruleFiles: shippedRuleFiles() }),
    );
    assert.deepEqual([...holder.grant(anonymous).graphs], ['http://example.org/graphs/a']);
  });

  it('refuses an anonymous caller with 401 and WWW-Authenticate, an identified one with 403', async () => {
    const holder = createPolicyHolder();
    holder.replace(
      await loadPolicySet({ policyFiles: [resolve('test/fixtures/integration/no-policies.ttl')], ruleFiles: shippedRuleFiles() }),
    );
    try {
      holder.grant(anonymous);
      assert.fail('expected 401');
    } catch (error) {
      assert.ok(error instanceof GuardError);
      assert.equal(error.status, 401);
      assert.equal(error.headers['www-authenticate'], 'Bearer');
    }
    assert.equal(
      statusOf(() => holder.grant(lonely)),
      403,
    );
  });
});

describe('createPolicyHolder grant cache', () => {
  it('hands the same caller object the same grant until the set is replaced', async () => {
    const holder = createPolicyHolder();
    const sources = { policyFiles: [resolve('test/fixtures/integration/policies.ttl')], ruleFiles: shippedRuleFiles() };
    holder.replace(await loadPolicySet(sources));
    const caller = Object.freeze({ agent: 'http://example.org/agents/keeper', groups: [], authenticated: true });
    const first = holder.grant(caller);
    assert.equal(holder.grant(caller), first);
    assert.deepEqual([...first.graphs].sort(), [
      'http://example.org/graphs/a',
      'http://example.org/graphs/b',
      'http://example.org/graphs/secret',
    ]);
    // Interleaved callers each keep their own grant: the cache is keyed by the caller object.
    const everyone = holder.grant(anonymous);
    assert.deepEqual([...everyone.graphs], ['http://example.org/graphs/a']);
    assert.equal(holder.grant(caller), first);
    assert.deepEqual([...holder.grant(anonymous).graphs], ['http://example.org/graphs/a']);
    // A reload must not serve the grant of the previous set.
    holder.replace(await loadPolicySet({ ...sources, policyFiles: [resolve('test/fixtures/integration/no-policies.ttl')] }));
    assert.equal(
      statusOf(() => holder.grant(caller)),
      403,
    );
  });
});
