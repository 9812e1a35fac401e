// curl sends a key each way the Clients table of docs/authentication.md lists: Bearer, X-API-Key, Basic with -u, and a user:KEY@ URL (curl makes it Basic).

import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { KEYS, useTestGuard } from '../helpers/start-test-guard.js';

const run = promisify(execFile);

function missing(): string | undefined {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'no curl on PATH (apt-get install curl)';
  }
}
const why = missing();

describe('curl through the guard', { skip: why === undefined ? false : why }, () => {
  const guard = useTestGuard();

  it('each way of sending the key runs the query as its caller', async () => {
    const query = encodeURIComponent('ASK { GRAPH <http://example.org/graphs/b> { ?s ?p ?o } }');
    const ways: Record<string, string[]> = {
      'Authorization: Bearer': ['-H', `Authorization: Bearer ${KEYS.beta}`, `${guard().endpoint}?query=${query}`],
      'X-API-Key': ['-H', `X-API-Key: ${KEYS.beta}`, `${guard().endpoint}?query=${query}`],
      '-u user:KEY': ['-u', `user:${KEYS.beta}`, `${guard().endpoint}?query=${query}`],
      'user:KEY@ URL': [`${guard().endpoint.replace('http://', `http://user:${KEYS.beta}@`)}?query=${query}`],
    };
    for (const [way, args] of Object.entries(ways)) {
      const before = guard().logs.length;
      const { stdout } = await run('curl', ['-s', '-H', 'Accept: application/sparql-results+json', ...args]);
      assert.equal((JSON.parse(stdout) as { boolean: boolean }).boolean, true, way);
      assert.equal(
        guard()
          .logs.slice(before)
          .find((line) => line.path === '/sparql')?.agent,
        'http://example.org/agents/beta-user',
        way,
      );
    }
  });
});
