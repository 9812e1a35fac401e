// Checks the text of a fact source's query: one SPARQL 1.1 CONSTRUCT, nothing else.

import { createStrictParser } from './sparqljs-internals.js';

/**
 * Why `text` is not a SPARQL 1.1 CONSTRUCT query the guard may send to its store as it
 * stands, or undefined when it is one. Relative IRIs are refused (there is no base to
 * resolve them against that the store and the guard would agree on); the reason never
 * quotes the text.
 */
export function findConstructProblem(text: string): string | undefined {
  let parsed: { type?: string; queryType?: string };
  try {
    parsed = createStrictParser().parse(text) as { type?: string; queryType?: string };
  } catch (error) {
    if (error instanceof RangeError) return 'nested too deeply';
    const line = (error as { hash?: { loc?: { first_line?: number } } }).hash?.loc?.first_line;
    return `not valid SPARQL 1.1${line === undefined ? '' : ` (line ${line})`}`;
  }
  if (parsed.type !== 'query') return 'an update, not a CONSTRUCT query';
  if (parsed.queryType !== 'CONSTRUCT') return `a ${parsed.queryType ?? 'non-CONSTRUCT'} query, not a CONSTRUCT`;
  return undefined;
}
