// Runs the examples of docs/authentication.md as written: the trusted headers' configuration and header values, and the client snippets against the demo.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { createCallerIdentifier } from '../../src/auth/identify-caller.js';
import { parseConfig, readConfig } from '../../src/config/read-config.js';
import { startGuard } from '../../src/server/start-guard.js';
import { CLIENT_PACKAGE_SKIP } from '../clients/import-client-library.js';
import { codeBlockAfter, readDoc, sectionOf } from '../helpers/markdown-table.js';

const page = readDoc('docs/authentication.md');

describe('docs/authentication.md, run as written', () => {
  it('the trusted headers: the configuration as written, and each header value the page shows makes the caller it says', () => {
    const section = sectionOf(page, '## Trusted headers');
    const json = JSON.parse(`{${codeBlockAfter(section, 'in request headers:', 'json')}}`) as Record<string, unknown>;
    const identify = createCallerIdentifier(parseConfig(json, { configFile: undefined, env: {} }).auth);
    // The page's own examples: `X-Remote-User: ann` and `X-Remote-Groups: hr, staff`.
    const [, agentHeader, agentValue] = /`(X-Remote-User): (\w+)` makes\s+`<([^>]+)>`/.exec(section) ?? [];
    const [, groupsHeader, groupsValue] = /`(X-Remote-Groups): ([^`]+)` is the groups/.exec(section) ?? [];
    assert.ok(agentHeader !== undefined && groupsHeader !== undefined, 'the page shows both headers');
    const caller = identify({ [agentHeader.toLowerCase()]: agentValue!, [groupsHeader.toLowerCase()]: groupsValue! });
    assert.deepEqual(caller, {
      agent: 'https://example.org/agents/ann',
      groups: ['hr', 'staff'],
      authenticated: true,
      via: 'trusted-headers',
    });
    assert.match(section, /\*\*comma-separated\*\*/);
  });

  // The snippet's import finds Comunica in the client tests' package, where the snippet is written.
  const skip = CLIENT_PACKAGE_SKIP;
  it('the Comunica snippet runs as written (its import included) against the demo, with only the URL changed', { skip }, async () => {
    const guard = await startGuard(readConfig({ GUARD_CONFIG: resolve('policies/demo.json'), PORT: '0' }), () => undefined);
    mkdirSync(resolve('test/clients/.tmp'), { recursive: true });
    const folder = mkdtempSync(join(resolve('test/clients/.tmp'), 'docs-comunica-'));
    try {
      const snippet = codeBlockAfter(page, '**Comunica.**', 'js').replaceAll('http://127.0.0.1:8080/sparql', `${guard.url}/sparql`);
      const file = join(folder, 'snippet.mjs');
      writeFileSync(file, `${snippet}\nconsole.log(JSON.stringify((await bindings.toArray()).length));\n`);
      // Not spawnSync: the guard answering the snippet runs in this process.
      const { stdout } = await promisify(execFile)(process.execPath, [file], { encoding: 'utf8', timeout: 120_000 });
      assert.equal(stdout.trim(), '10');
    } finally {
      rmSync(folder, { recursive: true, force: true });
      await guard.close();
    }
  });
});
