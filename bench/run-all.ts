// `npm run bench`: runs every benchmark, each in a fresh process, and prints one report with date, commit and machine.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { describeMachine } from './describe-machine.js';
import { runEchoing } from './fresh-process.js';

/** Scenario scripts in report order; a script not built (another engineer's, not there yet) is skipped. */
const SCRIPTS = ['rewrite-latency', 'end-to-end', 'templated-workload', 'metrics-cost', 'streaming', 'compile-policies', 'reload-latency', 'identify-caller'];

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

/** The load average at the start: other work on the machine lowers the ratios (the CPU per request much less). */
function describeLoad(): string {
  return `${loadavg().map((value) => value.toFixed(2)).join(', ')} (1, 5, 15 min) on ${availableParallelism()} cores`;
}

/**
 * The report is Markdown: each of our scripts prints a `###` section with its table; any
 * other script's output goes in a text block under its name.
 */
async function main(): Promise<void> {
  const started = Date.now();
  process.stdout.write(`date: ${new Date().toISOString()}\ncommit: ${describeCommit()}\nmachine: ${describeMachine()}\nload: ${describeLoad()}\n\n`);
  let failed = 0;
  for (const name of SCRIPTS) {
    const script = fileURLToPath(new URL(`./${name}.js`, import.meta.url));
    if (!existsSync(script)) continue;
    const markdown = name !== 'compile-policies' && name !== 'reload-latency';
    if (!markdown) process.stdout.write(`### ${name}\n\n\`\`\`text\n`);
    try {
      const output = await runEchoing(script);
      if (!markdown) process.stdout.write(`${output.endsWith('\n') ? '' : '\n'}\`\`\`\n\n`);
    } catch (error) {
      failed += 1;
      process.stdout.write(`${markdown ? '' : '```\n'}\n**${name} failed**: ${error instanceof Error ? error.message : String(error)}\n\n`);
    }
  }
  process.stdout.write(`whole run: ${((Date.now() - started) / 1_000).toFixed(0)} s\n`);
  process.exitCode = failed === 0 ? 0 : 1;
}

await main();
