// Runs the client snippets of docs/authentication.md as written against the demo.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { readConfig } from '../../src/config/read-config.js';
import { startGuard } from '../../src/server/start-guard.js';
import { codeBlockAfter, readDoc } from '../helpers/markdown-table.js';

const page = readDoc('docs/authentication.md');

describe('docs/authentication.md, run as written', () => {
  it('the Comunica snippet runs as written (its import included) against the demo, with only the URL changed', async () => {
    const guard = await startGuard(readConfig({ GUARD_CONFIG: resolve('policies/demo.json'), PORT: '0' }), () => undefined);
    mkdirSync(resolve('.tmp'), { recursive: true });
    const folder = mkdtempSync(join(resolve('.tmp'), 'docs-comunica-'));
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
