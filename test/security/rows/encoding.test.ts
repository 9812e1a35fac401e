// Rows bypass class "encoding of bound values": an agent IRI, a group or a claim holding quotes, braces, '>', '} UNION {', newlines or escapes is a value the pattern compares, never text that changes its structure.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { AGENTS, ROWS_EX, askRows, describeRowsOnEveryStore, valuesOf, viewAnswer, type RowsCaller } from '../../helpers/rows-stores.js';
import { canonical } from '../../helpers/redaction-oracle.js';
import type { RowCaller } from '../../helpers/row-view.js';

const P = `PREFIX ex: <${ROWS_EX}>\n`;
const NAMES = `${P}SELECT ?n WHERE { GRAPH ?g { ?s ex:name ?n } }`;

/** Group values (JWT groups are an array of strings, any text) and the odd records each must see beside "odd six". */
const GROUPS: readonly (readonly [string, string[]])[] = [
  ['q"} UNION { ?this ?p ?o } #', ['odd one']],
  ['" } UNION { ?this ?p ?o } #', []],
  ['"} UNION {?this ?p ?o} #', []],
  ['line\nbreak', ['odd two']],
  ['line\\nbreak', []],
  ['\\u0022 } UNION {', ['odd three']],
  ['\u0022 } UNION {', []],
  ['été ☃', ['odd four']],
  ['\\u00e9t\\u00e9 \\u2603', []],
  ['> } UNION { ?this ?p ?o }', []],
  ["' . ?this ?p ?o . '", []],
  // A backslash enters as itself: before a quote, at the end, doubled, before a codepoint escape.
  ['\\', []],
  ['\\" } UNION { ?this ?p ?o } #', []],
  ['x\\', []],
  ['\\\\u0022 } UNION {', []],
  ['{ } UNION { ?this ?p ?o }', []],
];

/** Claim values and the odd records each must see. */
const CLAIMS: readonly (readonly [string, string[]])[] = [
  ['é', ['odd four']],
  ['\\u00e9', []],
  ['> } UNION { ?this ?p ?o }', ['odd five']],
  ['x" . ?this ?p ?o . #', []],
  ['"""', []],
  ['}', []],
  ['\\u0022 } UNION {', []],
  ['\\', []],
  // A NUL: Virtuoso 7.2.5 reads a query's text up to one (the claim was once written as it is: a 500 for the caller).
  ['x\u0000y', []],
];

describeRowsOnEveryStore('rows: bound values never change the pattern', (rows) => {
  const check = async (caller: RowsCaller, identity: RowCaller, expected: readonly string[], what: string): Promise<void> => {
    const answer = await askRows(rows().endpoint, NAMES, caller);
    if (answer.status === 401) return; // an identity the guard refuses to form (no IRI) reaches no pattern
    assert.equal(answer.status, 200, `${what}: ${answer.body}`);
    assert.deepEqual(valuesOf(answer.body, 'n'), [...expected].sort(), what);
    assert.deepEqual(canonical(answer.body, false), viewAnswer(rows().fixture, identity, NAMES), what);
  };

  for (const [group, expected] of GROUPS) {
    it(`a JWT group ${JSON.stringify(group)}`, async () => {
      const groups = ['odd-reader', group];
      const token = await rows().token({ groups });
      await check({ token }, { agent: `${AGENTS}jo`, groups }, [...expected, 'odd six'], group);
    });
  }

  for (const [claim, expected] of CLAIMS) {
    it(`a JWT claim ${JSON.stringify(claim)}`, async () => {
      const token = await rows().token({ groups: ['odd-claim'], code: claim });
      await check({ token }, { agent: `${AGENTS}jo`, groups: ['odd-claim'], claims: new Map([['code', claim]]) }, expected, claim);
    });
  }

  it('a claim that is not a string matches nothing', async () => {
    for (const code of [['é'], { value: 'é' }, 1, true]) {
      const token = await rows().token({ groups: ['odd-claim'], code });
      await check({ token }, { agent: `${AGENTS}jo`, groups: ['odd-claim'] }, [], JSON.stringify(code));
    }
  });

  for (const [agent, expected] of [
    ['o(dd)~x', ['odd five']],
    ['x> } UNION { ?this ?p ?o } <', []],
    ['x>} UNION {?this ?p ?o} <x', []],
    ['o"dd', []],
    ['o%22dd', []],
    ['o\\u0027dd~x', []],
  ] as const) {
    it(`a trusted agent header ${JSON.stringify(agent)}`, async () => {
      const caller = { headers: { 'x-rows-user': agent, 'x-rows-groups': 'odd-agent' } };
      await check(caller, { agent: `${AGENTS}${agent}`, groups: ['odd-agent'] }, expected, agent);
    });
    it(`a JWT subject ${JSON.stringify(agent)}`, async () => {
      const token = await rows().token({ sub: agent, groups: ['odd-agent'] });
      await check({ token }, { agent: `${AGENTS}${agent}`, groups: ['odd-agent'] }, expected, agent);
    });
  }
});
