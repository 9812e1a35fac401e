// The tests that import the client tests' own package are built only when it is installed: without it they are reported skipped here, with it they must have been built.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CLIENT_PACKAGE_SKIP } from './import-client-library.js';

/** The test files test/clients/tsconfig.json builds (its `include`: files and folders, comment lines aside). */
function packageTests(): string[] {
  const config = JSON.parse(
    readFileSync('test/clients/tsconfig.json', 'utf8')
      .split('\n')
      .filter((line) => !line.trim().startsWith('//'))
      .join('\n'),
  ) as { include: string[] };
  const expand = (path: string): string[] =>
    statSync(path).isDirectory() ? readdirSync(path).flatMap((name) => expand(join(path, name))) : path.endsWith('.test.ts') ? [path] : [];
  return config.include.flatMap((entry) => expand(join('test', 'clients', entry))).sort();
}

describe("the client tests' package (test/clients/package.json)", () => {
  const files = packageTests();
  it('names at least the Comunica and browser tests', () => {
    assert.ok(files.includes(join('test', 'clients', 'comunica.test.ts')), files.join(', '));
    assert.ok(files.includes(join('test', 'clients', 'browser', 'query-page.test.ts')), files.join(', '));
  });
  for (const file of files) {
    it(`${file} is built and run`, { skip: CLIENT_PACKAGE_SKIP }, () => {
      assert.ok(existsSync(join('dist', file.replace(/\.ts$/, '.js'))), `${file} is not built: npm run build`);
    });
  }
});
