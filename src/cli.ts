#!/usr/bin/env node
// The operator's command line: `sparql-guard [serve|hash-key]`.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createApiKey, hashApiKey } from './auth/hash-api-key.js';
import { ConfigError, readConfig } from './config/read-config.js';
import { PolicyLoadError } from './policy/policy-load-error.js';
import { logToStdout, startGuard } from './server/start-guard.js';

const USAGE = `usage: sparql-guard [serve | hash-key]
  serve      start the proxy (the default); configuration from GUARD_CONFIG
  hash-key   print a new API key and its config entry; with a key on stdin, print its hash`;

/** The demo configuration used when neither GUARD_CONFIG nor GUARD_UPSTREAM is set. */
const DEMO_CONFIG = fileURLToPath(new URL('../../policies/demo.json', import.meta.url));

async function main(argv: readonly string[]): Promise<number> {
  const [command = 'serve', ...rest] = argv;
  if (rest.length > 0 || command === '--help' || command === '-h') return usage(command === '--help' || command === '-h');
  switch (command) {
    case 'serve':
      return serve();
    case 'hash-key':
      return hashKey();
    default:
      return usage(false);
  }
}

function usage(asked: boolean): number {
  (asked ? process.stdout : process.stderr).write(`${USAGE}\n`);
  return asked ? 0 : 2;
}

async function serve(): Promise<number> {
  const env = { ...process.env };
  if (env.GUARD_CONFIG === undefined || env.GUARD_CONFIG === '') {
    // Fail closed: the demo's public keys must never stand in front of a real store.
    if (env.GUARD_UPSTREAM !== undefined) {
      throw new ConfigError('GUARD_CONFIG is not set: a real upstream needs a configuration file with its policies');
    }
    env.GUARD_CONFIG = DEMO_CONFIG;
    logToStdout({ event: 'demo', message: 'GUARD_CONFIG is not set: serving the demo (policies/demo.json) on the embedded store' });
  }
  const config = readConfig(env);
  const guard = await startGuard(config);
  logToStdout({ event: 'listening', url: guard.url, path: config.path });

  process.on('SIGHUP', () => void guard.reload());
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      logToStdout({ event: 'shutdown', signal });
      void guard.close().then(resolve);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  return 0;
}

async function hashKey(): Promise<number> {
  if (process.stdin.isTTY) {
    const key = createApiKey();
    process.stdout.write(`key: ${key}\n`);
    process.stdout.write(`config entry: ${JSON.stringify({ agent: 'https://example.org/agents/CHANGE-ME', groups: [], sha256: hashApiKey(key) })}\n`);
    return 0;
  }
  const key = readFileSync(0, 'utf8').trim();
  if (key === '') {
    process.stderr.write('hash-key: stdin is empty: pipe a key in, or run it in a terminal to make a new one\n');
    return 2;
  }
  process.stdout.write(`${hashApiKey(key)}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const known = error instanceof ConfigError || error instanceof PolicyLoadError;
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`sparql-guard: ${known ? message : `failed to start: ${message}`}\n`);
    process.exit(1);
  },
);
