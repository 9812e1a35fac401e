// `sparql-guard hash-key`: makes a new API key and its config entry, or hashes a key piped in.

import { fstatSync, readFileSync } from 'node:fs';
import { parseCommandArgs } from './parse-command-args.js';
import { createApiKey, hashApiKey } from '../auth/hash-api-key.js';
import { GROUP_NAME_RULE, isGroupName } from '../config/read-config.js';
import { findAgentIriProblem } from '../iri.js';
import { decodeUtf8Text, NotUtf8Error } from '../decode-utf8-text.js';

export const HASH_KEY_USAGE = `usage: sparql-guard hash-key [--agent IRI] [--group NAME]...
  in a terminal (or with stdin from /dev/null): prints a new random key and its auth.apiKeys entry
  with a key piped or redirected in: prints its SHA-256 (and the entry when --agent is given)`;

/**
 * Runs the command; returns the exit code. The key is read from stdin, never from
 * the arguments, so it stays out of shell history and the process list.
 */
export function hashKeyCommand(args: readonly string[]): number {
  let values: { agent?: string; group?: string[] };
  try {
    values = parseCommandArgs(args, { agent: { type: 'string' }, group: { type: 'string', multiple: true } });
  } catch (error) {
    return usageError((error as Error).message);
  }
  const agent = values.agent ?? 'https://example.org/agents/CHANGE-ME';
  const problem = findAgentIriProblem(agent);
  if (problem !== undefined) return usageError(`--agent ${problem}`);
  // The entry goes into auth.apiKeys as printed: a group the configuration refuses is refused here.
  const badGroup = (values.group ?? []).find((group) => !isGroupName(group));
  if (badGroup !== undefined) return usageError(`--group ${JSON.stringify(badGroup)}: ${GROUP_NAME_RULE}`);
  const entry = (sha256: string) => JSON.stringify({ agent, groups: [...new Set(values.group ?? [])], sha256 });

  if (!stdinIsData()) {
    const key = createApiKey();
    process.stdout.write(`key: ${key}\nconfig entry: ${entry(hashApiKey(key))}\n`);
    return 0;
  }
  let key: string;
  try {
    key = decodeUtf8Text(readFileSync(0)).trim();
  } catch (error) {
    const problem =
      error instanceof NotUtf8Error ? `is ${error.message}` : `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'read error'})`;
    process.stderr.write(`sparql-guard hash-key: stdin ${problem}\n`);
    return 2;
  }
  if (key === '') {
    process.stderr.write('sparql-guard hash-key: stdin is empty: pipe a key in, or run it in a terminal to make a new one\n');
    return 2;
  }
  // A header's bytes reach the guard one character per byte (Latin-1), so a key beyond printable
  // ASCII sent in a header never hashes to what its UTF-8 text hashes to here.
  const outside = /[^\x20-\x7e]/u.exec(key)?.[0];
  if (outside !== undefined) {
    const codePoint = `U+${outside.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    process.stderr.write(
      `sparql-guard hash-key: the key holds ${codePoint}: a key is printable ASCII, as a header carries it (make one with hash-key alone)\n`,
    );
    return 2;
  }
  const sha256 = hashApiKey(key);
  process.stdout.write(values.agent === undefined ? `${sha256}\n` : `config entry: ${entry(sha256)}\n`);
  return 0;
}

/**
 * A pipe, socket or regular file on stdin carries a key; a terminal or /dev/null
 * (character devices) does not, so a script without a terminal does not hang.
 */
function stdinIsData(): boolean {
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isSocket() || stat.isFile();
  } catch {
    return false;
  }
}

function usageError(message: string): number {
  process.stderr.write(`sparql-guard hash-key: ${message}\n${HASH_KEY_USAGE}\n`);
  return 2;
}
