// Reads a command's options with node:util's parseArgs, and refuses an option given twice that takes one value (parseArgs keeps the last silently).

import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * The options of `args` as parseArgs reads them (strict: an unknown option or a positional
 * argument throws), and throws an Error naming the option when one that is not `multiple` is
 * given more than once: `check --why a --why b` answered for b alone. The commands print the
 * message as a usage error (exit 2).
 */
export function parseCommandArgs<O extends NonNullable<ParseArgsConfig['options']>>(args: readonly string[], options: O) {
  const { values, tokens } = parseArgs({ args: [...args], options, tokens: true });
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== 'option' || options[token.name]?.multiple === true) continue;
    if (seen.has(token.name)) throw new Error(`option --${token.name} is given twice (give it once)`);
    seen.add(token.name);
  }
  return values;
}
