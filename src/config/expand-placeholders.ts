// Replaces `${NAME}` placeholders in one configuration string with environment variables.

import { ConfigError } from './config-error.js';

/** `$${` (an escaped, literal `${`) or a placeholder `${...}`, terminated or not. */
const PLACEHOLDER = /\$\$\{|\$\{([^}]*)(\})?/g;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Returns `text` with every `${NAME}` replaced by the environment variable NAME; `$${` stands
 * for a literal `${`, and any other `$` is kept as it is. An unset or empty variable, an
 * unterminated placeholder or a placeholder that is not a variable name is a ConfigError
 * naming `keyPath` (and the variable, never its value). Values are inserted verbatim: they
 * are not scanned for placeholders again.
 */
export function expandPlaceholders(text: string, env: NodeJS.ProcessEnv, keyPath: string): string {
  if (!text.includes('${')) return text;
  return text.replace(PLACEHOLDER, (match, name: string | undefined, closing: string | undefined) => {
    if (match === '$${') return '${';
    if (closing === undefined) {
      throw new ConfigError(`config ${keyPath}: unterminated \${ placeholder (close it with }, or write $\${ for a literal \${)`);
    }
    if (name === undefined || !VARIABLE_NAME.test(name)) {
      throw new ConfigError(
        `config ${keyPath}: a \${...} placeholder must hold an environment variable name of letters, digits and _ (or write $\${ for a literal \${)`,
      );
    }
    const value = env[name];
    if (value === undefined) {
      throw new ConfigError(`config ${keyPath}: environment variable ${name} is not set (set it, or write $\${ for a literal \${)`);
    }
    // An empty variable is nearly always a secret that did not arrive (an empty line in an
    // .env file, a missing CI secret): refuse rather than send an empty credential.
    if (value === '') {
      throw new ConfigError(`config ${keyPath}: environment variable ${name} is empty (give it a value)`);
    }
    return value;
  });
}
