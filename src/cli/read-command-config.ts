// Reads the configuration of a command the way `serve` does: --config, else GUARD_CONFIG, else the demo.

import { join } from 'node:path';
import { ConfigError, readConfig, type GuardConfig } from '../config/read-config.js';
import { packageRoot } from '../package-root.js';
import { checkFactQueries } from '../server/check-fact-queries.js';

/**
 * The configuration named by `configFile` (a `--config` flag), else by GUARD_CONFIG;
 * with neither, the demo's, unless GUARD_UPSTREAM is set: the same fail-closed rule
 * as `serve`, so `check` and `explain` judge exactly what `serve` would run.
 */
export function readCommandConfig(env: NodeJS.ProcessEnv, configFile: string | undefined): GuardConfig {
  const config = readNamedConfig(env, configFile);
  checkFactQueries(config);
  return config;
}

function readNamedConfig(env: NodeJS.ProcessEnv, configFile: string | undefined): GuardConfig {
  if (configFile !== undefined) return readConfig({ ...env, GUARD_CONFIG: configFile }, '--config');
  if (env.GUARD_CONFIG !== undefined && env.GUARD_CONFIG !== '') return readConfig(env);
  if (env.GUARD_UPSTREAM !== undefined) {
    throw new ConfigError('GUARD_CONFIG is not set: a real upstream needs a configuration file with its policies');
  }
  // The demo configuration, as `serve` uses it when neither GUARD_CONFIG nor GUARD_UPSTREAM is set.
  return readConfig({ ...env, GUARD_CONFIG: join(packageRoot(), 'policies', 'demo.json') });
}
