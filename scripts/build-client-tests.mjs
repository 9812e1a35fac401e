// Builds the tests that import the client tests' own package (test/clients/tsconfig.json) when that package is installed
// (npm ci --prefix test/clients); without it they are not built, and test/clients/client-package.test.ts reports them skipped.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';

if (!existsSync(join('test', 'clients', 'node_modules', '.package-lock.json'))) process.exit(0);
const tsc = join('node_modules', 'typescript', 'bin', 'tsc');
const build = spawnSync(process.execPath, [tsc, '-p', join('test', 'clients', 'tsconfig.json')], { stdio: 'inherit' });
process.exit(build.status ?? 1);
