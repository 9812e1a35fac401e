// A policy file saved in place is read only once it has settled: a half that parses must never be the set in force.

import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readPolicyFiles } from '../../src/policy/load/read-policy-files.js';
import { readSettledFile, SETTLE_MS } from '../../src/policy/read-settled-file.js';
import { readRuleFile } from '../../src/policy/rules/read-rule-file.js';

const HEAD = '@prefix guard: <https://w3id.org/sparql-guard#> .\n';
const GRANT =
  '<https://example.org/policies/staff> a guard:Policy ; guard:agent guard:AuthenticatedAgent ; guard:readGraph <https://example.org/g/hr> .\n';
const HIDE = '<https://example.org/policies/staff> guard:hidePath <https://example.org/salary> .\n';

describe('policy files saved in place', () => {
  const folder = mkdtempSync(join(tmpdir(), 'sg-settle-'));
  after(() => rmSync(folder, { recursive: true, force: true }));

  it('waits for the rest of a file written in two parts: the hidden path of the second part is in the set', async () => {
    const file = join(folder, 'two-parts.ttl');
    // The first part alone is a valid policy set that grants the graph with nothing hidden.
    writeFileSync(file, HEAD + GRANT);
    const reading = readPolicyFiles([file]);
    setTimeout(() => appendFileSync(file, HIDE), SETTLE_MS / 2);
    const document = await reading;
    assert.deepEqual(
      document.policies.map((policy) => policy.hidePaths),
      [['https://example.org/salary']],
    );
  });

  it('fails the load with one line when the file keeps changing, so the set in force stays', async () => {
    const file = join(folder, 'busy.ttl');
    writeFileSync(file, HEAD + GRANT);
    let written = 0;
    const writer = setInterval(() => appendFileSync(file, `# line ${++written}\n`), SETTLE_MS / 4);
    try {
      await assert.rejects(readPolicyFiles([file]), (error: Error) => {
        assert.match(
          error.message,
          /policy file kept changing while it was read \(10 tries\); save it by writing a new file and renaming it over the old one/,
        );
        assert.doesNotMatch(error.message, /\n/);
        return true;
      });
      await assert.rejects(readRuleFile(file), /rule file kept changing while it was read/);
    } finally {
      clearInterval(writer);
    }
  });

  it('reads a settled file, and one whose time is in the future (a skewed clock), without waiting for it', async () => {
    const old = join(folder, 'old.ttl');
    writeFileSync(old, HEAD + GRANT + HIDE);
    const past = new Date(Date.now() - 60_000);
    utimesSync(old, past, past);
    const future = join(folder, 'future.ttl');
    writeFileSync(future, HEAD + GRANT);
    const later = new Date(Date.now() + 3_600_000);
    utimesSync(future, later, later);
    // A wait for the future file would last an hour: the test would time out.
    assert.equal((await readSettledFile(old)).toString(), HEAD + GRANT + HIDE);
    assert.equal((await readSettledFile(future)).toString(), HEAD + GRANT);
  });
});
