// The start-up error of a bad configuration: one line that names the key path and the fix.

/**
 * A configuration problem found at start-up. The message is one line of the form
 * `config <key path>: <problem> (<fix>)` (or `environment variable <NAME>: ...`) and never
 * echoes a configured value, since values may carry secrets from the environment.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';

  constructor(message: string) {
    super(message.replace(/[\r\n]+/g, ' '));
  }
}
