// A fact source whose query is not one SPARQL 1.1 CONSTRUCT stops every command and every start, with the key path, before the store is asked.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { parseConfig } from '../../src/config/read-config.js';
import { startGuard } from '../../src/server/start-guard.js';

const BIN = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
const POLICIES = resolve('test/fixtures/integration/policies.ttl');

/** Queries a fact source must not have, each with the reason the refusal names. */
const REFUSED: readonly (readonly [string, string])[] = [
  ['SELECT ?s WHERE { ?s ?p ?o }', 'a SELECT query, not a CONSTRUCT'],
  ['INSERT DATA { <urn:x:s> <urn:x:p> <urn:x:o> }', 'an update, not a CONSTRUCT query'],
  ['CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o', 'not valid SPARQL 1.1'],
  ['CONSTRUCT { ?s <p> ?o } WHERE { ?s <p> ?o }', 'not valid SPARQL 1.1'],
];

function configWith(query: string) {
  return {
    upstream: 'http://127.0.0.1:1/sparql',
    policies: [POLICIES],
    facts: [
      { name: 'members', query: 'CONSTRUCT WHERE { ?s ?p ?o }' },
      { name: 'second', query },
    ],
  };
}

describe('fact source queries', () => {
  const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-fact-queries-'));
  after(() => rmSync(folder, { recursive: true, force: true }));

  for (const [query, reason] of REFUSED) {
    it(`check refuses ${JSON.stringify(query)}: ${reason}`, () => {
      const configFile = join(folder, 'guard.json');
      writeFileSync(configFile, JSON.stringify(configWith(query)));
      const result = spawnSync(process.execPath, [BIN, 'check', '--config', configFile], { encoding: 'utf8', timeout: 60_000 });
      assert.equal(result.status, 1, result.stdout);
      assert.match(result.stderr, new RegExp(`^sparql-guard: config facts\\[1\\]\\.query: ${reason}`));
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
      // The message never quotes the query.
      assert.ok(!result.stderr.includes(query.slice(0, 12)), result.stderr);
    });

    it(`startGuard refuses ${JSON.stringify(query)} before it starts anything`, async () => {
      const config = parseConfig(configWith(query), { configFile: join(folder, 'guard.json'), env: {} });
      const logs: unknown[] = [];
      await assert.rejects(
        startGuard(config, (line) => logs.push(line)),
        (error: Error) => error.name === 'ConfigError' && error.message.startsWith(`config facts[1].query: ${reason}`),
      );
      assert.deepEqual(logs, []);
    });
  }
});
