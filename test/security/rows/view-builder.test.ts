// The rows oracle's view builder against views computed by hand from the definition, on the rows fixtures.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import oxigraph from 'oxigraph';
import { buildView, grantedGraphs, readRowPolicies, rowSubjects, type RowCaller } from '../../helpers/row-view.js';

const FIXTURES = 'test/fixtures/security/rows';
const EX = 'http://example.org/rows#';
const AG = 'http://example.org/agents/';
const MAIN = 'http://example.org/rows/main';
const SECOND = 'http://example.org/rows/second';

const data = new oxigraph.Store();
data.load(readFileSync(`${FIXTURES}/data.trig`, 'utf8'), { format: 'application/trig' });
const policies = readRowPolicies(readFileSync(`${FIXTURES}/policies.ttl`, 'utf8'));

/** The view's triples of `graph` as `subject predicate` lines (blank nodes by their name or type), sorted. */
function columns(view: oxigraph.Store, graph: string): string[] {
  const name = (term: oxigraph.Term): string => {
    if (term.termType !== 'BlankNode') return term.value.replace(EX, '');
    const label = data.match(term, oxigraph.namedNode(`${EX}name`), null, null)[0]?.object.value;
    return `_:${label ?? data.match(term, oxigraph.namedNode(`${EX}text`), null, null)[0]?.object.value}`;
  };
  return view
    .match(null, null, null, oxigraph.namedNode(graph))
    .map((quad) => `${name(quad.subject)} ${quad.predicate.value.replace(EX, '').replace(/.*#type$/, 'a')}`)
    .sort();
}

const caller = (agent: string | undefined, groups: string[] = [], claims?: Record<string, string>): RowCaller => ({
  agent: agent === undefined ? undefined : AG + agent,
  groups,
  ...(claims === undefined ? {} : { claims: new Map(Object.entries(claims)) }),
});

const all = (subject: string, predicates: string[]): string[] => predicates.map((predicate) => `${subject} ${predicate}`);
const PROJECT = ['a', 'name', 'budget', 'team', 'region', 'lead', 'note'];
/** ex:p3 has no note. */
const P3 = PROJECT.filter((predicate) => predicate !== 'note');

describe('rows oracle view builder: V_c(g) by hand', () => {
  it('reads the policies: principals, graphs, readPath, hidePath, row rule with the prefixes, rowData', () => {
    const members = policies.find((policy) => policy.iri.endsWith('/members-main'));
    assert.ok(members);
    assert.deepEqual(members.agents, [`${AG}alice`]);
    assert.deepEqual(members.graphs, [MAIN]);
    assert.equal(members.readPaths, undefined);
    assert.match(members.rowPattern ?? '', /PREFIX ex: <http:\/\/example\.org\/rows#>\n[\s\S]*\?this ex:member \?agent$/);
    assert.deepEqual(members.rowData, ['http://example.org/rows/members']);
    const publicPolicy = policies.find((policy) => policy.iri.endsWith('/public'));
    assert.deepEqual([...(publicPolicy?.readPaths ?? [])].sort(), [
      `${EX}budget`,
      `${EX}name`,
      'http://www.w3.org/1999/02/22-rdf-syntax-ns#type',
    ]);
    assert.match(publicPolicy?.rowPattern ?? '', /\?this a <http:\/\/example\.org\/rows#PublicRecord>$/);
  });

  it('membership rule over a rowData graph, and a class rule on the granted graph itself in the second graph', () => {
    const alice = caller('alice');
    const view = buildView(data, policies, alice);
    assert.deepEqual(grantedGraphs(policies, alice), [MAIN, SECOND]);
    assert.deepEqual(
      columns(view, MAIN),
      [
        ...all('p1', PROJECT),
        ...all('r2', ['a', 'a', 'name', 'budget', 'team']),
        ...all('alice', ['a', 'name', 'email', 'phone', 'salary', 'team']),
        ...all('_:Dark', ['a', 'name', 'budget']),
      ].sort(),
    );
    // ex:p1 has no type in g:second: its row there is not a public record.
    assert.deepEqual(columns(view, SECOND), all('d1', ['a', 'name', 'budget']).sort());
    assert.equal(
      view.match(null, null, null, oxigraph.namedNode('http://example.org/rows/members')).length,
      0,
      'the rule data is not in the view',
    );
  });

  it('class rule with a column list: three columns of the public records, blank-node subject included', () => {
    const view = buildView(data, policies, caller('pub', ['public']));
    assert.deepEqual(
      columns(view, MAIN),
      [
        ...all('r1', ['a', 'name', 'budget']),
        ...all('r2', ['a', 'a', 'name', 'budget']),
        ...all('_:Anonymous record', ['a', 'name', 'budget']),
      ].sort(),
    );
    assert.deepEqual(columns(view, SECOND), all('d1', ['a', 'name', 'budget']).sort());
  });

  it('group rule: the pattern holds for one of the groups (strings); hidePath beside it', () => {
    const view = buildView(data, policies, caller('bob', ['staff', 'team-b']));
    assert.deepEqual(
      columns(view, MAIN),
      [...all('p2', PROJECT), ...all('bob', ['a', 'name', 'email', 'phone', 'team']), ...all('_:shared note', ['text', 'team'])].sort(),
    );
    assert.deepEqual(columns(view, SECOND), []);
  });

  it('readPath mixed with hidePath (hidden wins), lifted by a class rule with every column, and an unrestricted second graph', () => {
    const view = buildView(data, policies, caller('cat', ['contractor']));
    const names = ['p1', 'p2', 'p3', 'r1', 'r2', 'alice', 'bob', 'carol', '_:Anonymous record', '_:Ghost', '_:Dark'].map(
      (s) => `${s} name`,
    );
    const emails = ['alice', 'bob', '_:Ghost'].map((s) => `${s} email`);
    const projects = [
      ...all('p1', PROJECT),
      ...all('p2', PROJECT),
      ...all('p3', P3),
      ...all('r2', ['a', 'a', 'name', 'budget', 'team']),
      ...all('_:Dark', ['a', 'name', 'budget']),
    ];
    assert.deepEqual(columns(view, MAIN), [...names.filter((line) => !projects.includes(line)), ...emails, ...projects].sort());
    assert.equal(columns(view, MAIN).length, 37);
    assert.equal(columns(view, SECOND).length, 8);
  });

  it('a policy without a row rule lifts the rows for its columns', () => {
    const view = buildView(data, policies, caller('dan'));
    assert.equal(columns(view, MAIN).length, 16);
    assert.deepEqual(
      columns(view, MAIN).filter((line) => line.startsWith('p3 ')),
      all('p3', P3).sort(),
    );
    assert.ok(columns(view, MAIN).includes('carol name'));
    assert.ok(!columns(view, MAIN).includes('carol salary'));
  });

  it('a pattern joining two rowData graphs read as one merged graph', () => {
    const view = buildView(data, policies, caller('erin'));
    assert.deepEqual(columns(view, MAIN), all('p3', P3).sort());
  });

  it('a JWT claim: its string value, quotes kept as data; a missing claim or agent matches nothing', () => {
    const north = buildView(data, policies, caller('jo', ['regional'], { region: 'north' }));
    assert.deepEqual(columns(north, MAIN), all('p1', ['a', 'name', 'budget', 'region']).sort());
    const quoted = buildView(data, policies, caller('jo', ['regional'], { region: 'north"east' }));
    assert.deepEqual(columns(quoted, MAIN), all('p3', ['a', 'name', 'budget', 'region']).sort());
    assert.deepEqual(columns(buildView(data, policies, caller('jo', ['regional'])), MAIN), []);
    assert.deepEqual(columns(buildView(data, policies, caller('jo', ['regional'], { region: 'north" } UNION { ?this ?p ?o' })), MAIN), []);
    const anonymous = rowSubjects(
      data,
      policies.find((policy) => policy.iri.endsWith('/members-main'))?.rowPattern ?? '',
      ['http://example.org/rows/members'],
      caller(undefined, ['public']),
    );
    assert.deepEqual([...(anonymous === 'all' ? ['all'] : anonymous)], []);
  });

  it('a caller no policy applies to sees nothing', () => {
    assert.equal(buildView(data, policies, caller('nobody', ['nothing'])).size, 0);
  });
});
