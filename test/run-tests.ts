// Runs every compiled test file with node's test runner and its spec reporter (same on Node 20, 22, 24).
// --stores runs the store suite only; --skip=<folder> (repeatable) leaves a folder of test/ out (`w3c`, `security/rows`), and says so; --concurrency=N runs N files at once; --list prints the files instead.
// With the store lab up, the files that use it run one at a time whatever --concurrency says: two of them at once could race a write against a comparison.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { reachesLab } from './helpers/reaches-lab.js';

const testRoot = fileURLToPath(new URL('.', import.meta.url));
const USAGE = 'usage: run-tests [--stores] [--list] [--skip=<folder of test/>]... [--concurrency=N]';
let parsed;
try {
  parsed = parseArgs({
    options: {
      stores: { type: 'boolean', default: false },
      list: { type: 'boolean', default: false },
      skip: { type: 'string', multiple: true, default: [] },
      concurrency: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
} catch (error) {
  // An unknown option or a missing value: one line, not a stack trace.
  process.stderr.write(`run-tests: ${(error as Error).message.split('\n')[0]}; ${USAGE}\n`);
  process.exit(2);
}
const { values } = parsed;
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const skipped = values.skip ?? [];
for (const folder of skipped) {
  if (!existsSync(join(testRoot, folder))) {
    process.stderr.write(`run-tests: --skip=${folder} names no folder of test/\n`);
    process.exit(2);
  }
}
// --concurrency=N runs N test files at once (node --test's own default is one less than the cores).
const filesAtOnce = values.concurrency === undefined ? undefined : Number(values.concurrency);
if (filesAtOnce !== undefined && !(Number.isInteger(filesAtOnce) && filesAtOnce >= 1)) {
  process.stderr.write(`run-tests: --concurrency=${values.concurrency} is no whole number from 1\n`);
  process.exit(2);
}
const concurrency = filesAtOnce === undefined ? [] : [`--test-concurrency=${filesAtOnce}`];
/** Folders run by their own scripts (`npm run test:stores`, `npm run test:scale-out`), not by `npm test`. */
const excluded = new Set(values.stores ? [] : ['stores', 'scale-out']);
const only = values.stores ? 'stores' : undefined;

function testFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(folder, entry.name);
      if (entry.isDirectory())
        return excluded.has(entry.name) || skipped.includes(relative(testRoot, path).split(sep).join('/')) ? [] : testFiles(path);
      return entry.name.endsWith('.test.js') ? [path] : [];
    })
    .sort();
}

if (skipped.length > 0) process.stdout.write(`# run-tests: not run here (--skip): test/${skipped.join('/, test/')}/\n`);
const files = testFiles(only ? join(testRoot, only) : testRoot).map((file) => relative(process.cwd(), file));
if (values.list) {
  process.stdout.write(files.map((file) => `${file}\n`).join(''));
  process.exit(0);
}

/** The lab is up when a lab store's variable is set (rig/up.sh's endpoints.env). */
const labUp = Object.entries(process.env).some(([name, value]) => /^RIG_[A-Z_]+_QUERY$/.test(name) && value !== '');

if (filesAtOnce === undefined || filesAtOnce === 1 || !labUp) {
  const result = spawnSync(process.execPath, ['--test', '--test-reporter=spec', ...concurrency, ...files], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}

// Two runs side by side: the lab's files one at a time (their report as it comes), and the others, N - 1 at once
// (their report after both runs end, so that no two reports interleave).
const known = new Map<string, boolean>();
const labFiles = files.filter((file) => reachesLab(resolve(file), testRoot, known));
const otherFiles = files.filter((file) => !labFiles.includes(file));
process.stdout.write(
  `# run-tests: ${labFiles.length} files use the store lab and run one at a time; beside them ${otherFiles.length} files run ${filesAtOnce - 1} at a time (their report follows the lab's)\n`,
);
const run = (group: readonly string[], atOnce: number, inherit: boolean) =>
  new Promise<{ status: number; output: Buffer[] }>((done) => {
    const output: Buffer[] = [];
    const child = spawn(process.execPath, ['--test', '--test-reporter=spec', `--test-concurrency=${atOnce}`, ...group], {
      stdio: inherit ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk));
    child.on('close', (code) => done({ status: code ?? 1, output }));
  });
const [lab, others] = await Promise.all([
  labFiles.length > 0 ? run(labFiles, 1, true) : Promise.resolve({ status: 0, output: [] }),
  otherFiles.length > 0 ? run(otherFiles, filesAtOnce - 1, false) : Promise.resolve({ status: 0, output: [] }),
]);
process.stdout.write(`# run-tests: the ${otherFiles.length} files that do not use the store lab\n`);
for (const chunk of others.output) process.stdout.write(chunk);
process.exit(lab.status !== 0 ? lab.status : others.status);
