// Runs the whole bench (run-all, in a fresh process), puts its report into bench/README.md between the results markers, and keeps it as a dated run in bench/notes/.

import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runEchoing } from './_util/fresh-process.js';

const START = '<!-- results:start (bench/update-readme.ts writes this part) -->';
const END = '<!-- results:end -->';
/** npm runs scripts from the package root, where bench/README.md is. */
const README = resolve('bench/README.md');

// A failed run rejects here, before the README is read: it is left as it was.
const report = await runEchoing(fileURLToPath(new URL('./run-all.js', import.meta.url)));

const readme = readFileSync(README, 'utf8');
const from = readme.indexOf(START);
const to = readme.indexOf(END);
if (from === -1 || to < from) throw new Error(`${README}: the results markers are missing`);
// The report's own header lines (date, commit, machine, whole run) become a list so Markdown
// keeps them on separate lines; a section's `machine:` line stays with its description.
const firstSection = report.indexOf('\n### ');
const head = report.slice(0, firstSection).replace(/^(date|commit|machine|load): /gm, '- $1: ');
const body = head + report.slice(firstSection).replace(/^whole run: /m, '- whole run: ');
writeFileSync(README, `${readme.slice(0, from + START.length)}\n\n${body.trim()}\n\n${readme.slice(to)}`);
// The same report, named by its day and commit, so a later run does not erase it.
const day = /^- date: (\d{4}-\d{2}-\d{2})/m.exec(body)?.[1] ?? new Date().toISOString().slice(0, 10);
const commit = /^- commit: (\S+)/m.exec(body)?.[1] ?? 'unknown';
const note = join(resolve('bench/notes'), `${day}-${commit}.md`);
writeFileSync(note, `# ${day}: a whole run of npm run bench at ${commit}\n\n${body.trim()}\n`);
process.stdout.write(`\nwrote ${README} and ${note}\n`);
