// `npm run mutants`: applies each mutant of the rewriter to a copy of dist/ and runs the attacks and oracles until one fails; a mutant none catches is reported and fails the run.

import { spawn } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KILLING_TESTS, REWRITER_MUTANTS, type Mutant } from './rewriter-mutants.js';

/** The build the mutants are applied to a copy of. */
const DIST = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** Inside the package, so that its node_modules and package.json are found from the copy (.tmp/ is ignored by git and the linters). */
const COPY = resolve('.tmp/mutants/dist');
/** One test file's run: an oracle on two cores takes a few minutes. */
const FILE_TIMEOUT_MS = 15 * 60_000;

/** The mutant's module with its change, or an Error when its `find` does not occur exactly once. */
export function mutated(mutant: Mutant, source: string): string | Error {
  const at = source.indexOf(mutant.find);
  if (at < 0) return new Error(`${mutant.id}: its text no longer occurs in ${mutant.file}`);
  if (source.indexOf(mutant.find, at + 1) >= 0) return new Error(`${mutant.id}: its text occurs more than once in ${mutant.file}`);
  return source.slice(0, at) + mutant.replace + source.slice(at + mutant.find.length);
}

/** Runs one test file of the copy; resolves with whether it passed and its last lines. */
function runFile(file: string): Promise<{ passed: boolean; tail: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--test', '--test-reporter=dot', join(COPY, 'test', file)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: FILE_TIMEOUT_MS,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
    child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
    child.on('close', (code) => done({ passed: code === 0, tail: output.trim().split('\n').slice(-3).join(' | ') }));
  });
}

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const mutants = only.length === 0 ? REWRITER_MUTANTS : REWRITER_MUTANTS.filter((mutant) => only.includes(mutant.id));
  if (mutants.length === 0) throw new Error(`no mutant named ${only.join(', ')}`);
  rmSync(COPY, { recursive: true, force: true });
  cpSync(join(DIST, 'src'), join(COPY, 'src'), { recursive: true });
  cpSync(join(DIST, 'test'), join(COPY, 'test'), { recursive: true });
  // Every mutant applies to the build as it is, before anything runs.
  const originals = new Map<string, string>();
  for (const mutant of mutants) {
    const path = join(COPY, 'src', mutant.file);
    if (!existsSync(path)) throw new Error(`${mutant.id}: no module ${mutant.file} in the build`);
    const source = originals.get(path) ?? readFileSync(path, 'utf8');
    originals.set(path, source);
    const result = mutated(mutant, source);
    if (result instanceof Error) throw result;
  }
  console.log(`baseline: ${KILLING_TESTS.length} files on the unchanged copy`);
  for (const file of KILLING_TESTS) {
    const { passed, tail } = await runFile(file);
    if (!passed) throw new Error(`the unchanged build fails ${file}: ${tail}`);
  }
  const survivors: string[] = [];
  for (const mutant of mutants) {
    const path = join(COPY, 'src', mutant.file);
    const source = originals.get(path)!;
    writeFileSync(path, mutated(mutant, source) as string);
    const started = Date.now();
    let killer: string | undefined;
    try {
      for (const file of KILLING_TESTS) {
        if (!(await runFile(file)).passed) {
          killer = file;
          break;
        }
      }
    } finally {
      writeFileSync(path, source);
    }
    const seconds = Math.round((Date.now() - started) / 1000);
    console.log(`${mutant.id}: ${killer === undefined ? 'SURVIVED' : `killed by ${killer}`} (${seconds} s): ${mutant.what}`);
    if (killer === undefined) survivors.push(mutant.id);
  }
  rmSync(COPY, { recursive: true, force: true });
  console.log(`${mutants.length - survivors.length} of ${mutants.length} mutants killed`);
  if (survivors.length > 0) {
    console.log(`survived: ${survivors.join(', ')}`);
    process.exitCode = 1;
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  });
}
