// Runs the examples of docs/command-line.md as written, through the bin, on the own-store template.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { readConfig } from '../../src/config/read-config.js';
import { loadPolicySet } from '../../src/policy/load/load-policy-set.js';
import { shippedRuleFiles } from '../../src/policy/rules/shipped-rule-files.js';
import { codeBlockAfter, readDoc } from '../helpers/markdown-table.js';

const page = readDoc('docs/command-line.md');

describe('docs/command-line.md, run as written', () => {
  it('the examples run with npx on the own-store template', () => {
    const script = codeBlockAfter(page, '\n## Examples\n', 'sh');
    assert.match(script, /^npx sparql-guard check /m, 'commands are written with npx: the bin is not on the PATH in a clone');
    const { GUARD_CONFIG: _config, STORE_URL: _store, ...env } = process.env;
    const run = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { encoding: 'utf8', env, timeout: 120_000 });
    assert.equal(run.status, 0, run.stderr);
    assert.match(
      run.stdout,
      /^key: |^config entry: \{"agent":"https:\/\/example\.org\/agents\/ann","groups":\["hr"\],"sha256":"[0-9a-f]{64}"\}$/m,
    );
    assert.match(run.stdout, /^ok: 3 policies from 1 policy file\(s\)/m);
    assert.match(run.stdout, /"query": "BASE <http:\/\/localhost\/>\\nSELECT \* FROM <https:\/\/example\.org\/graphs\/people>/);
  });

  it('the own-store template loads: every key valid, its policies and the shipped rules', async () => {
    const config = readConfig({
      GUARD_CONFIG: resolve('deploy/own-store/guard.json'),
      STORE_URL: 'https://store.example.org/sparql',
      ALICE_KEY_SHA256: 'a'.repeat(64),
    });
    assert.equal(config.upstream, 'https://store.example.org/sparql');
    const set = await loadPolicySet({ policyFiles: config.policies, ruleFiles: [...shippedRuleFiles(), ...config.rules] });
    assert.equal(set.policies.length, 3);
  });
});
