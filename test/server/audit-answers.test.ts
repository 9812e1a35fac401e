// The jq one-liners of docs/audit.md, run as written with Debian's jq on the audit records of a real run: who read G between T1 and T2, which policies let X read G.

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { INTEGRATION_API_KEYS, KEYS, sha256, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

const G = 'http://example.org/graphs/';
const P = 'http://example.org/policies/';
const AGENTS = 'http://example.org/agents/';
const WIDE_KEY = 'test-key-wide-0123456789abcdef';

const jqMissing = spawnSync('jq', ['--version']).error !== undefined;
const skip = jqMissing ? 'jq is not installed here (apt-get install -y jq): the documented one-liners are not run' : false;

/** The ```sh blocks of docs/audit.md under "Answers from the records", in order. */
function answerCommands(): string[] {
  const text = readFileSync('docs/audit.md', 'utf8');
  const section = text.slice(text.indexOf('## Answers from the records'));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!.trim());
}

describe('the one-liners of docs/audit.md on a real run', { skip }, () => {
  let folder: string;
  let file: string;
  let t: TestGuard;
  /** Request ids by what each request was, and the time window that holds the middle ones. */
  const ids: Record<string, string> = {};
  let from = '';
  let to = '';

  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'sparql-guard-audit-answers-'));
    file = join(folder, 'audit.jsonl');
    const policies = join(folder, 'policies.ttl');
    const wide = Array.from({ length: 100 }, (_, i) => `<${G}wide/${i}>`).join(', ');
    writeFileSync(
      policies,
      `${readFileSync('test/fixtures/integration/policies.ttl', 'utf8')}
p:wide a guard:Policy ; guard:agent <${AGENTS}wide> ; guard:readGraph ${wide} .\n`,
    );
    t = await startTestGuard({
      policies: [policies],
      auth: { apiKeys: [...INTEGRATION_API_KEYS, { agent: `${AGENTS}wide`, sha256: sha256(WIDE_KEY) }] },
      audit: { file, maxListed: 50 },
    });
    const send = async (name: string, key: string | undefined, query = 'SELECT * WHERE { ?s ?p ?o } LIMIT 1') => {
      const response = await fetch(`${t.endpoint}?query=${encodeURIComponent(query)}`, {
        headers: key === undefined ? {} : { 'x-api-key': key },
      });
      await response.arrayBuffer();
      ids[name] = response.headers.get('x-request-id')!;
      // Records are stamped to the millisecond: keep the window's edges apart.
      await new Promise((resolve) => setTimeout(resolve, 30));
    };
    await send('keeper-before', KEYS.keeper);
    from = new Date().toISOString();
    await send('keeper', KEYS.keeper);
    await send('keeper-secret-only', KEYS.keeper, `SELECT * FROM <${G}secret> WHERE { ?s ?p ?o }`);
    await send('keeper-refused', KEYS.keeper, 'INSERT DATA { <a:b> <a:c> <a:d> }');
    await send('beta', KEYS.beta);
    await send('beta-b', KEYS.beta, `SELECT * FROM <${G}b> WHERE { ?s ?p ?o }`);
    await send('anonymous', undefined);
    await send('wide', WIDE_KEY);
    to = new Date().toISOString();
    await send('keeper-after', KEYS.keeper);
    await new Promise((resolve) => setTimeout(resolve, 60));
  });
  after(async () => {
    await t?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  const run = (command: string, env: Record<string, string>): string =>
    execFileSync('bash', ['-c', command], { env: { ...process.env, FILE: file, ...env }, encoding: 'utf8' });

  it('documents three commands', () => {
    assert.equal(answerCommands().length, 3);
  });

  it('"who read G between T1 and T2": the allowed queries over G in the window, with the policy that granted G', () => {
    const [whoRead] = answerCommands();
    const lines = run(whoRead!, { G: `${G}secret`, FROM: from, TO: to })
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { agent: string; requestId: string; policies: string[] });
    assert.deepEqual(
      lines.map((line) => line.requestId),
      [ids.keeper, ids['keeper-secret-only']],
      'not the ones before or after the window, not the refused update, not the callers without secret',
    );
    for (const line of lines) {
      assert.equal(line.agent, `${AGENTS}keeper`);
      assert.deepEqual(line.policies, [`${P}keeper`]);
    }
    const readA = run(whoRead!, { G: `${G}a`, FROM: from, TO: to })
      .trim()
      .split('\n');
    // Everyone reads a: keeper, beta and the anonymous caller; not beta's query over b alone, and
    // not the wide caller's, whose record lists no graph (past maxListed: the third command finds it).
    assert.equal(readA.length, 3);
  });

  it('"which policies let X read G": each granting policy with the number of queries', () => {
    const [, whichPolicies] = answerCommands();
    const answer = run(whichPolicies!, { X: `${AGENTS}beta-user`, G: `${G}b` });
    assert.deepEqual(
      answer
        .trim()
        .split('\n')
        .map((line) => line.trim()),
      [`2 ${P}beta`],
    );
    const keeperA = run(whichPolicies!, { X: `${AGENTS}keeper`, G: `${G}a` });
    assert.deepEqual(
      keeperA
        .trim()
        .split('\n')
        .map((line) => line.trim()),
      [`3 ${P}everyone`, `3 ${P}keeper`],
    );
  });

  it('lists the records of the window whose lists were too long to name a graph', () => {
    const [, , bounded] = answerCommands();
    const lines = run(bounded!, { FROM: from, TO: to }).trim().split('\n');
    assert.equal(lines.length, 1);
    const record = JSON.parse(lines[0]!) as { requestId: string; dataset: { default: { count: number } } };
    assert.equal(record.requestId, ids.wide);
    assert.equal(record.dataset.default.count, 101);
  });
});
