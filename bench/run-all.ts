// `npm run bench`: runs every benchmark, each in a fresh process, and prints one report with date, commit and machine.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describeLoad, describeMachine } from './_util/describe-machine.js';
import { runEchoing } from './_util/fresh-process.js';

/** Scenario scripts in report order; a script that is not built is skipped. */
const SCRIPTS = [
  'rewrite-latency',
  'end-to-end',
  'templated-workload',
  'audit-cost',
  'metrics-cost',
  'streaming',
  'compile-policies',
  'reload-latency',
  'fact-refresh',
  'identify-caller',
  'hand-written-code',
  'upstream-client',
  'grant-size',
  'dataset-clause-cost',
];

/** The checked-out commit, marked when the working tree differs from it. */
function describeCommit(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = git('status', '--porcelain', '--untracked-files=no') === '' ? '' : ' (with uncommitted changes)';
    return `${git('rev-parse', '--short', 'HEAD')}${dirty}`;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

/** The report is Markdown: each script prints a `###` section with its tables. */
async function main(): Promise<void> {
  const started = Date.now();
  process.stdout.write(
    `date: ${new Date().toISOString()}\ncommit: ${describeCommit()}\nmachine: ${describeMachine()}\nload: ${describeLoad()}\n\n`,
  );
  let failed = 0;
  for (const name of SCRIPTS) {
    const script = fileURLToPath(new URL(`./${name}.js`, import.meta.url));
    if (!existsSync(script)) continue;
    try {
      await runEchoing(script);
    } catch (error) {
      failed += 1;
      process.stdout.write(`\n**${name} failed**: ${error instanceof Error ? error.message : String(error)}\n\n`);
    }
  }
  process.stdout.write(`whole run: ${((Date.now() - started) / 1_000).toFixed(0)} s\n`);
  process.exitCode = failed === 0 ? 0 : 1;
}

await main();
