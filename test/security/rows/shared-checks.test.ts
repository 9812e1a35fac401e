// Rows bypass class "shared checks": a row check is written once where one check holds several triple patterns: the triples of one constant subject in a BGP under the same rules, and the BGPs of one group graph pattern. A triple whose column only another policy shows keeps its own, and a group filled once per graph (GRAPH ?g) writes its checks in each (docs/design/sparql.md, "Rows and columns").

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { AGENTS, ROWS_EX, assertAsView, describeRowsOnEveryStore, keyOf, valuesOf } from '../../helpers/rows-stores.js';

const P = `PREFIX ex: <${ROWS_EX}>\n`;

/** Staff of team-b who is also public: the team rule shows every column but salary, the public rule (ex:PublicRecord) three. */
const MIXED = { headers: { 'x-rows-user': 'mixed', 'x-rows-groups': 'staff,team-b,public' } };
const MIXED_IDENTITY = { agent: `${AGENTS}mixed`, groups: ['staff', 'team-b', 'public'] };

describeRowsOnEveryStore('rows: checks written once', (rows) => {
  /** `pattern` read in the main graph, where both rules apply (the default graph merges it with the second). */
  const inMain = (select: string, pattern: string): string =>
    `${P}SELECT ${select} WHERE { GRAPH <${rows().fixture.graphs.main}> { ${pattern} } }`;

  it('a column only the other rule shows is not carried by the check of a visible one (either order)', async () => {
    // ex:r1 is a public record of no team: its name is visible (public), its region is not (only the team rule shows it).
    for (const query of [
      inMain('?n ?r', 'ex:r1 ex:name ?n . ex:r1 ex:region ?r'),
      inMain('?n ?r', 'ex:r1 ex:region ?r . ex:r1 ex:name ?n'),
      inMain('?n', 'ex:r1 ex:region "south" . ex:r1 ex:name ?n'),
      inMain('?n ?r', 'ex:r1 ex:name ?n OPTIONAL { ex:r1 ex:region ?r }'),
    ]) {
      const body = await assertAsView(rows(), MIXED, MIXED_IDENTITY, query);
      assert.ok(!body.includes('south'), `${query}: ${body}`);
      // The name alone is visible: with OPTIONAL it is answered, the region unbound.
      if (query.includes('OPTIONAL')) assert.deepEqual(valuesOf(body, 'r'), ['UNBOUND']);
    }
  });

  it('a record both rules admit answers every column of the BGP', async () => {
    const body = await assertAsView(rows(), MIXED, MIXED_IDENTITY, inMain('?n ?r ?b', 'ex:p2 ex:name ?n ; ex:region ?r ; ex:budget ?b'));
    assert.deepEqual(valuesOf(body, 'r'), ['south']);
  });

  it('a hidden constant subject with a ground triple and a variable one gives nothing', async () => {
    for (const caller of ['bob', 'alice'] as const) {
      const query = inMain('?n', 'ex:p1 ex:team "team-a" . ex:p1 ex:name ?n');
      const body = await assertAsView(
        rows(),
        caller,
        { agent: `${AGENTS}${caller}`, groups: caller === 'bob' ? ['staff', 'team-b'] : [] },
        query,
      );
      if (caller === 'bob') assert.deepEqual(valuesOf(body, 'n'), []);
    }
  });

  it('the triples of one constant subject under one rule are held by one join', async () => {
    const response = await fetch(`${rows().endpoint}/explain`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${keyOf('bob')}` },
      body: new URLSearchParams({
        query: `${P}SELECT ?n ?b ?t WHERE { ex:p2 ex:name ?n ; ex:budget ?b ; ex:team ?t ; a ex:Project }`,
        'default-graph-uri': rows().fixture.graphs.main,
      }),
    });
    assert.equal(response.status, 200);
    const { query } = (await response.json()) as { query: string };
    assert.equal(query.match(/SELECT DISTINCT/g)?.length, 1, query);
    assert.doesNotMatch(query, /EXISTS/, query);
  });

  it('a constant subject is joined on one variable of its triple, and every value of the other still answers', async () => {
    for (const [where, joinedOn] of [
      ['ex:p2 ?p ?o', '?p'],
      ['ex:p2 ex:name ?n . ex:p2 ?p ?o', '?n'],
      ['ex:p1 ?p ?o', '?p'],
    ] as const) {
      const query = inMain('?p ?o ?n', where);
      for (const caller of ['bob', 'alice'] as const)
        await assertAsView(rows(), caller, { agent: `${AGENTS}${caller}`, groups: caller === 'bob' ? ['staff', 'team-b'] : [] }, query);
      const response = await fetch(`${rows().endpoint}/explain`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${keyOf('bob')}` },
        body: new URLSearchParams({ query }),
      });
      const explained = ((await response.json()) as { query: string }).query;
      // Joined on two variables (the predicate and the object), Virtuoso 7.2 took 120-175 ms to plan each new text.
      assert.match(explained, new RegExp(`SELECT DISTINCT \\${joinedOn} WHERE`), explained);
      assert.doesNotMatch(explained, /SELECT DISTINCT \?\w+ \?\w+ WHERE/, explained);
    }
  });

  it("the constant subjects of a group are checked inside its variable subject's join, and a hidden one still hides the group", async () => {
    const callers = [
      ['bob', { agent: `${AGENTS}bob`, groups: ['staff', 'team-b'] }],
      ['alice', { agent: `${AGENTS}alice`, groups: [] }],
      [MIXED, MIXED_IDENTITY],
      [FAY, FAY_IDENTITY],
    ] as const;
    for (const pattern of [
      '?s ex:name ?n . ex:p1 ex:name ?m',
      '?s ex:name ?n . ex:p2 ex:name ?m',
      'ex:p1 ex:name ?m FILTER(?m != "x") ?s ex:name ?n',
      '?s ex:name ?n OPTIONAL { ?s ex:budget ?b } ex:p1 ex:team ?t',
      '?s ex:name ?n . ex:p2 ex:name ?m . ex:p1 ex:name ?k',
      '?s ex:name ?n . ex:p1 ex:name [] . ex:r1 ex:name ?m',
      '?s ex:name ?n MINUS { ?s ex:region "north" } ex:p2 ex:region ?r',
    ]) {
      for (const [caller, identity] of callers) {
        await assertAsView(rows(), caller, identity, inMain('*', pattern));
        await assertAsView(rows(), caller, identity, inMain('(COUNT(*) AS ?c)', pattern));
      }
    }
    // Bob sees ex:p2 and not ex:p1: every row of a group naming ex:p1 goes, whatever ?s is.
    const hidden = await assertAsView(rows(), 'bob', callers[0][1], inMain('?s', '?s ex:name ?n . ex:p1 ex:name ?m'));
    assert.deepEqual(valuesOf(hidden, 's'), []);
    const shown = await assertAsView(rows(), 'bob', callers[0][1], inMain('?s', '?s ex:name ?n . ex:p2 ex:name ?m'));
    assert.ok(valuesOf(shown, 's').length > 0, shown);
    const response = await fetch(`${rows().endpoint}/explain`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${keyOf('bob')}` },
      body: new URLSearchParams({ query: inMain('*', '?s ex:name ?n . ex:p2 ex:name ?m FILTER(?m != "x") ex:p1 ex:name ?k') }),
    });
    const { query } = (await response.json()) as { query: string };
    // One sub-select for the group: Virtuoso 7.2 plans each one of a new text anew (docs/design/sparql.md).
    assert.equal(query.match(/SELECT DISTINCT/g)?.length, 1, query);
    assert.match(query, /SELECT DISTINCT \?s WHERE/, query);
    assert.match(query, /\?row\w*c1_/, query);
  });

  /** Fay is a member of ex:r1 only, under one rule over the same rule data for both graphs: its checks read alike in each. */
  const FAY = { headers: { 'x-rows-user': 'fay', 'x-rows-groups': 'shared-members' } };
  const FAY_IDENTITY = { agent: `${AGENTS}fay`, groups: ['shared-members'] };

  it('a group filled once per graph (GRAPH ?g) writes its checks in every branch, though they read alike', async () => {
    for (const query of [
      `${P}SELECT ?g ?s ?n WHERE { GRAPH ?g { ?s ex:name ?n . ?s ex:budget ?b } }`,
      `${P}SELECT ?g ?s ?n WHERE { GRAPH ?g { ?s ex:name ?n FILTER(?n != "x") ?s ex:budget ?b } }`,
    ]) {
      const body = await assertAsView(rows(), FAY, FAY_IDENTITY, query);
      assert.deepEqual(valuesOf(body, 's'), ['ex:r1'], query);
    }
  });

  it('the BGPs of one group share a check; those of other groups keep theirs', async () => {
    for (const pattern of [
      '?s ex:name ?n FILTER(?n != "x") ?s ex:budget ?b',
      '?s ex:name ?n OPTIONAL { ?s ex:budget ?b } ?s a ?c',
      '{ ?s ex:name ?n } UNION { ?s ex:budget ?b }',
      '?s ex:name ?n FILTER NOT EXISTS { ?s ex:budget ?b } ?s a ?c',
      '?s ex:name ?n MINUS { ?s ex:region ?r } BIND(?s AS ?t) ?t ex:budget ?b',
    ]) {
      for (const [caller, identity] of [
        [FAY, FAY_IDENTITY],
        ['bob', { agent: `${AGENTS}bob`, groups: ['staff', 'team-b'] }],
      ] as const)
        await assertAsView(rows(), caller, identity, inMain('*', pattern));
    }
    const response = await fetch(`${rows().endpoint}/explain`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${keyOf('bob')}` },
      body: new URLSearchParams({ query: inMain('*', '?s ex:name ?n FILTER(?n != "x") ?s ex:budget ?b') }),
    });
    const { query } = (await response.json()) as { query: string };
    assert.equal(query.match(/SELECT DISTINCT \?s WHERE/g)?.length, 1, query);
  });
});
