// Reads a golden rewrite case (test/fixtures/sparql/golden): its grant, protocol graphs, allowed functions, query and what it expects.

import type { Grant } from '../../src/policy/policy-set.js';

/**
 * A case file: `# comment` lines, `grant: iri iri ...`, any number of
 * `hidden: graph predicate predicate ...` (the grant's hidden set of a
 * graph), `default: iri` / `named: iri` (protocol parameters, raw),
 * `allow: iri iri ...` (the planner's allowedFunctions), then
 * `--- query` and either `--- expect` (exact upstream text) or `--- status N`.
 * With UPDATE_GOLDEN=1 a missing `--- expect` block is written from the output.
 */
export interface GoldenCase {
  readonly grant: Grant;
  readonly defaultGraphs: string[];
  readonly namedGraphs: string[];
  readonly allowedFunctions: string[];
  readonly query: string;
  readonly expect?: string;
  readonly status?: number;
}

export function readGoldenCase(text: string): GoldenCase {
  const [head = '', ...sections] = text.split(/^--- /m);
  const graphs = new Set<string>();
  const hiddenByGraph = new Map<string, Set<string>>();
  const defaultGraphs: string[] = [];
  const namedGraphs: string[] = [];
  const allowedFunctions: string[] = [];
  for (const line of head.split('\n')) {
    const match = /^(grant|hidden|default|named|allow):\s?(.*)$/.exec(line);
    if (match === null) continue;
    const [, key, value = ''] = match;
    if (key === 'grant') for (const iri of value.split(/\s+/).filter(Boolean)) graphs.add(iri);
    else if (key === 'allow') allowedFunctions.push(...value.split(/\s+/).filter(Boolean));
    else if (key === 'hidden') {
      const [graph = '', ...paths] = value.split(/\s+/).filter(Boolean);
      hiddenByGraph.set(graph, new Set(paths));
    } else (key === 'default' ? defaultGraphs : namedGraphs).push(value);
  }
  let query = '';
  let expect: string | undefined;
  let status: number | undefined;
  for (const section of sections) {
    const newline = section.indexOf('\n');
    const title = section.slice(0, newline === -1 ? undefined : newline).trim();
    const body = newline === -1 ? '' : section.slice(newline + 1).replace(/\n$/, '');
    if (title === 'query') query = body;
    else if (title === 'expect') expect = body;
    else if (title.startsWith('status ')) status = Number(title.slice(7));
  }
  const grant: Grant = { policies: ['urn:test:policy'], graphs, hiddenByGraph };
  return {
    grant,
    defaultGraphs,
    namedGraphs,
    allowedFunctions,
    query,
    ...(expect === undefined ? {} : { expect }),
    ...(status === undefined ? {} : { status }),
  };
}
