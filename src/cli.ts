#!/usr/bin/env node
// The operator's command line: `sparql-guard [serve | check | explain | hash-key | --version]`; each command lives in src/cli/.

import cluster from 'node:cluster';
import { ConfigError } from './config/config-error.js';
import { PolicyLoadError } from './policy/policy-load-error.js';
import { nearestWord } from './nearest-word.js';
import { OWN_VERSION } from './own-version.js';
import { holdSignals } from './server/hold-signals.js';
import type { RunningGuard } from './server/start-guard.js';

// Each command's module is imported when that command runs: `--version` and `hash-key` load no
// HTTP server, `check` and `explain` no cluster (about 0.4 s of imports that a command does not use).

/** The usage of every command, from their modules (imported for it: a misuse or --help only). */
async function usageText(): Promise<string> {
  const [{ CHECK_USAGE }, { EXPLAIN_USAGE }, { HASH_KEY_USAGE }] = await Promise.all([
    import('./cli/check-command.js'),
    import('./cli/explain-command.js'),
    import('./cli/hash-key-command.js'),
  ]);
  return `usage: sparql-guard [serve | check | explain | hash-key] [options]
       sparql-guard --version | -V
  serve      start the proxy (the default); configuration from GUARD_CONFIG; SIGHUP reloads the policies
  check      load configuration, policies and rules as serve would; list what each principal gets
  explain    offline: the explain JSON of a query for a caller (no server needed)
  hash-key   print a new API key and its config entry; with a key on stdin, print its hash

${CHECK_USAGE}

${EXPLAIN_USAGE}

${HASH_KEY_USAGE}`;
}

async function main(argv: readonly string[]): Promise<number> {
  const [command = 'serve', ...rest] = argv;
  const help = (arg: string | undefined) => arg === '--help' || arg === '-h';
  // `check --help` was refused as an unknown option (exit 2); each command's help is the usage, which tells them all.
  if (help(command) || command === 'help' || (COMMANDS.includes(command) && rest.length === 1 && help(rest[0]))) return usage(true);
  if (command === '--version' || command === '-V') return version(rest);
  switch (command) {
    case 'serve':
      return rest.length > 0 ? misuse('serve takes no options: the configuration comes from GUARD_CONFIG') : serve();
    case 'check':
      return (await import('./cli/check-command.js')).checkCommand(rest, process.env);
    case 'explain':
      return (await import('./cli/explain-command.js')).explainCommand(rest, process.env);
    case 'hash-key':
      return (await import('./cli/hash-key-command.js')).hashKeyCommand(rest);
    default: {
      const near = nearestWord(command, COMMANDS);
      const named = /^[\x21-\x7e]{1,40}$/.test(command) ? `unknown command '${command}'` : 'unknown command';
      return misuse(near === undefined ? named : `${named} (did you mean ${near}?)`);
    }
  }
}

/** Prints the version of the package.json of sparql-guard. */
function version(rest: readonly string[]): number | Promise<number> {
  if (rest.length > 0) return misuse('--version takes no arguments');
  process.stdout.write(`${OWN_VERSION}\n`);
  return 0;
}

const COMMANDS = ['serve', 'check', 'explain', 'hash-key'];

/** A command line that cannot run: the line saying why, then the usage, on stderr (exit 2). */
function misuse(why: string): Promise<number> {
  process.stderr.write(`sparql-guard: ${why}\n`);
  return usage(false);
}

async function usage(asked: boolean): Promise<number> {
  (asked ? process.stdout : process.stderr).write(`${await usageText()}\n`);
  return asked ? 0 : 2;
}

async function serve(): Promise<number> {
  // From the first moment: the imports below take about half a second, in which a SIGHUP or a
  // SIGTERM would otherwise end the process by default. The held signals are handed over below.
  const held = holdSignals();
  const [{ readCommandConfig }, { reportReady, serveCluster, workerLog }, { logToStdout, startGuard }] = await Promise.all([
    import('./cli/read-command-config.js'),
    import('./server/serve-cluster.js'),
    import('./server/start-guard.js'),
  ]);
  const env = { ...process.env };
  const demo = env.GUARD_CONFIG === undefined || env.GUARD_CONFIG === '';
  // GUARD_CONFIG, else the demo, never the demo in front of a real store (GUARD_UPSTREAM):
  // the same rule as check and explain. A cluster worker always gets GUARD_CONFIG (and the
  // embedded store's URL) from its primary.
  const config = readCommandConfig(env, undefined);
  if (demo && cluster.isPrimary) {
    logToStdout({ event: 'demo', message: 'GUARD_CONFIG is not set: serving the demo (policies/demo.json) on the embedded store' });
  }
  if (config.configFile !== undefined) env.GUARD_CONFIG = config.configFile;
  if (cluster.isPrimary && config.workers > 1) return serveCluster(config, env, logToStdout, held);

  // The real listeners take over from the hold before the (slow) start: SIGTERM / SIGINT shut
  // down gracefully, SIGHUP reloads.
  const log = workerLog(logToStdout);
  let guard: RunningGuard | undefined;
  let reloadAfterStart = false;
  let requestStop: (signal: NodeJS.Signals) => void = () => {};
  const stopRequested = new Promise<NodeJS.Signals>((resolve) => (requestStop = resolve));
  let shuttingDown = false;
  void stopRequested.then(() => (shuttingDown = true));
  // SIGHUP reloads the policies and reopens the audit file, as nginx reopens its logs on a reload.
  process.on('SIGHUP', () => {
    if (guard === undefined) reloadAfterStart = true;
    else {
      guard.reopenAudit();
      void guard.reload();
    }
  });
  process.once('SIGTERM', requestStop);
  process.once('SIGINT', requestStop);
  // Signals held since the top of serve: a SIGHUP needs nothing, since the first load has not
  // begun and reads the files after it; a SIGTERM or SIGINT ends the process before it starts.
  const stopBeforeStart = held.release().find((signal) => signal !== 'SIGHUP');
  if (stopBeforeStart !== undefined) {
    log({ event: 'shutdown', signal: stopBeforeStart });
    return 0;
  }
  // node's cluster ends a worker at once when the primary goes away (its own 'disconnect'
  // listener calls process.exit): this one runs first, so the line goes out as it exits.
  if (cluster.isWorker) {
    process.prependOnceListener('disconnect', () => {
      if (cluster.worker?.exitedAfterDisconnect === true || shuttingDown) return;
      log({ event: 'primary-gone', message: 'the primary process disappeared: this worker exits' });
    });
  }

  const started = startGuard(config, log, { listenWhenLoaded: cluster.isWorker });
  const first = await Promise.race([started, stopRequested]);
  if (typeof first === 'string') {
    // Stopped while starting: wait for the start to settle, then close what it opened.
    log({ event: 'shutdown', signal: first });
    await started.then(
      (running) => running.close(),
      () => undefined,
    );
    return 0;
  }
  guard = first;
  // `address` is what the socket is bound to (0.0.0.0: every interface); `url` reaches it from this host.
  log({ event: 'listening', address: guard.address, url: guard.url, path: config.path });
  if (reloadAfterStart) void guard.reload();
  reportReady(guard.url, guard.address);

  const signal = await stopRequested;
  log({ event: 'shutdown', signal });
  await guard.close();
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
