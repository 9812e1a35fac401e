// An operator's rule file, read as its text for the loader and for `check --why`.

import { decodeUtf8Text, type NotUtf8Error } from '../../decode-utf8-text.js';
import { policyLoadError } from '../policy-load-error.js';
import { FileUnsettledError, readSettledFile } from '../read-settled-file.js';

/** The text of a rule file; a PolicyLoadError naming the file when it cannot be read or is not UTF-8. */
export async function readRuleFile(file: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readSettledFile(file);
  } catch (error) {
    if (error instanceof FileUnsettledError) throw policyLoadError(`rule file ${error.message}`, file);
    throw policyLoadError(`rule file cannot be read (${(error as NodeJS.ErrnoException).code ?? 'read error'})`, file);
  }
  try {
    return decodeUtf8Text(bytes);
  } catch (error) {
    throw policyLoadError(`rule file is ${(error as NotUtf8Error).message}`, file);
  }
}
