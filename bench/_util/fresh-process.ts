// Each bench scenario runs in a fresh node process: the bench file runs itself again with `--scenario`.

import { execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The words after `--scenario` when this process is a scenario child, else undefined. */
export function scenarioArguments(): string[] | undefined {
  const at = process.argv.indexOf('--scenario');
  return at === -1 ? undefined : process.argv.slice(at + 1);
}

/**
 * Runs the bench file `benchUrl` (its `import.meta.url`) again in a fresh process for one
 * scenario and parses the JSON the child prints; its stderr passes through.
 */
export function runScenario<T>(benchUrl: string, ...args: string[]): T {
  const output = execFileSync(process.execPath, [fileURLToPath(benchUrl), '--scenario', ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(output) as T;
}

/** Runs a script in a fresh node process, echoing its output as it comes; resolves with the output. */
export function runEchoing(script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      output += text;
      process.stdout.write(text);
    });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`${script} exited with code ${code}`))));
  });
}
