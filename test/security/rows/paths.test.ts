// Rows bypass class "paths": fixed-length sequences, inverses and alternatives step only through visible rows; variable-length paths are refused where every policy restricts the rows, answered where one lifts them.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { withoutBlankNodeLabels } from '../../helpers/answer-text.js';
import { ROWS_EX, askRows, assertAsView, describeRowsOnEveryStore, identityOf, valuesOf } from '../../helpers/rows-stores.js';

const P = `PREFIX ex: <${ROWS_EX}>\n`;

describeRowsOnEveryStore('rows: property paths', (rows) => {
  /**
   * dan's answer to `query` is his view's; a store that cannot evaluate the query at all (it fails for the
   * unrestricted keeper too: Virtuoso wants a transitive path's start bound, and no literal there) may fail it for dan.
   */
  async function danAsView(query: string): Promise<string | undefined> {
    const keeper = await askRows(rows().endpoint, query, 'keeperMain');
    if (keeper.status !== 200) {
      const dan = await askRows(rows().endpoint, query, 'dan');
      assert.notEqual(dan.status, 200, `${query}: the store failed it for the keeper`);
      assert.doesNotMatch(dan.body, /"bindings"/, 'no solution');
      return undefined;
    }
    return assertAsView(rows(), 'dan', identityOf('dan'), query);
  }

  const fixed: readonly { caller: 'alice' | 'bob' | 'pub'; query: string; variable: string; expected: string[] }[] = [
    { caller: 'alice', query: `${P}SELECT ?s ?n WHERE { ?s ex:lead/ex:name ?n }`, variable: 's', expected: ['ex:p1'] },
    { caller: 'bob', query: `${P}SELECT ?s ?n WHERE { ?s ex:lead/ex:name ?n }`, variable: 'n', expected: ['Bob'] },
    { caller: 'alice', query: `${P}SELECT ?n WHERE { ex:p2 ex:lead/ex:name ?n }`, variable: 'n', expected: [] },
    { caller: 'alice', query: `${P}SELECT ?p WHERE { ex:alice ^ex:lead ?p }`, variable: 'p', expected: ['ex:p1'] },
    { caller: 'bob', query: `${P}SELECT ?n WHERE { ex:alice ^ex:lead/ex:name ?n }`, variable: 'n', expected: [] },
    { caller: 'alice', query: `${P}SELECT ?n WHERE { ex:alice ^ex:lead/ex:name ?n }`, variable: 'n', expected: ['Apollo'] },
    { caller: 'bob', query: `${P}SELECT ?p ?t WHERE { ?p ex:note/ex:team ?t }`, variable: 'p', expected: ['ex:p2'] },
    { caller: 'alice', query: `${P}SELECT ?p ?t WHERE { ?p ex:note/ex:team ?t }`, variable: 'p', expected: [] },
    { caller: 'pub', query: `${P}SELECT ?v WHERE { ex:r1 (ex:name|ex:budget)/^ex:budget ?v }`, variable: 'v', expected: ['ex:r1'] },
    { caller: 'bob', query: `${P}SELECT ?x WHERE { ex:p2 ex:note/^ex:note ?x }`, variable: 'x', expected: ['ex:p2'] },
  ];
  for (const { caller, query, variable, expected } of fixed) {
    it(`${caller}: ${query.replace(P, '')}`, async () => {
      const body = await assertAsView(rows(), caller, identityOf(caller), query);
      assert.deepEqual(valuesOf(body, variable), expected);
    });
  }

  it('alternatives through hidden records give the visible ones only (9 values for alice)', async () => {
    const body = await assertAsView(rows(), 'alice', identityOf('alice'), `${P}SELECT ?s ?v WHERE { ?s (ex:name|ex:budget) ?v }`);
    assert.equal(valuesOf(body, 'v').length, 9);
    assert.doesNotMatch(withoutBlankNodeLabels(body), /Borealis|Cygnus|250/);
  });

  it('an alternative alone in a UNION branch, EXISTS or MINUS steps through visible rows only, answered (not refused as an unsafe rewrite)', async () => {
    for (const caller of ['alice', 'bob', 'pub'] as const) {
      for (const query of [
        // Only the columns pub reads (rdf:type, ex:name, ex:budget), so every caller is answered.
        `${P}SELECT ?s ?v WHERE { { ?s a ?v } UNION { ?s ex:name|ex:budget ?v } }`,
        `${P}SELECT ?s WHERE { ?s ex:name ?n FILTER EXISTS { ?s ex:budget|a ?x } }`,
        `${P}SELECT ?s WHERE { ?s ex:name ?n FILTER NOT EXISTS { ?s ex:budget|^ex:budget ?x } }`,
        `${P}SELECT ?s WHERE { ?s ex:name ?n MINUS { ?s ex:budget|a/a ?x } }`,
        `${P}SELECT (COUNT(*) AS ?c) WHERE { { [] a ?v } UNION { [] ex:name|ex:budget ?v } }`,
      ]) {
        await assertAsView(rows(), caller, identityOf(caller), query);
      }
    }
  });

  it('refuses variable-length paths over a graph whose rows every granting policy restricts, with one line saying why', async () => {
    for (const query of [
      `${P}SELECT ?s ?o WHERE { ?s ex:note* ?o }`,
      `${P}SELECT ?s ?o WHERE { ?s ex:lead+ ?o }`,
      `${P}SELECT ?o WHERE { ex:p2 ex:nothing? ?o }`,
      `${P}SELECT ?o WHERE { GRAPH ?g { ex:p2 (ex:lead|^ex:lead)* ?o } }`,
      `${P}ASK { FILTER EXISTS { ex:p1 (!ex:name)* ex:bob } }`,
    ]) {
      const answer = await askRows(rows().endpoint, query, 'alice');
      assert.equal(answer.status, 403, `${query}: ${answer.body}`);
      assert.equal(answer.body.trim().split('\n').length, 1, 'one line');
    }
  });

  it('paths where a policy without a row rule lifts the rows: answered as the view (steps over its columns, ends any node of the view)', async () => {
    // A path naming a predicate those columns do not show is a 403 (docs/policies.md, Rows and columns).
    assert.equal((await askRows(rows().endpoint, `${P}SELECT ?o WHERE { ex:carol ex:salary? ?o }`, 'dan')).status, 403);
    for (const query of [
      `${P}SELECT ?s ?o WHERE { ?s ex:name* ?o }`,
      `${P}SELECT ?o WHERE { ex:p2 ex:name? ?o }`,
      `${P}SELECT ?o WHERE { ex:carol ex:name? ?o }`,
      `${P}SELECT ?x WHERE { ?x ex:name* ?x }`,
      `${P}SELECT (COUNT(*) AS ?n) WHERE { ?x ex:name+ ?y }`,
    ]) {
      assert.doesNotMatch(withoutBlankNodeLabels((await danAsView(query)) ?? ''), /7000|south|250/, query);
    }
  });

  it('zero-length paths where a policy without a row rule lifts the rows: the ends are nodes of the view, rows included', async () => {
    // dan sees every name (lifted) and the whole of p3, his member row: its budget 75 is a node of his view, p2's 250 is not.
    for (const [query, expected] of [
      [`${P}SELECT ?o WHERE { 75 ex:name* ?o }`, ['"75"']],
      [`${P}SELECT ?o WHERE { "team-c" ex:name? ?o }`, ['"team-c"']],
      [`${P}SELECT ?o WHERE { 250 ex:name* ?o }`, []],
      [`${P}SELECT ?o WHERE { "south" ex:name? ?o }`, []],
      // As IRIs (Virtuoso takes no literal at the start of a transitive path): ex:Project is a node of p3, his row.
      [`${P}SELECT ?o WHERE { ex:Project ex:name? ?o }`, ['"ex:Project"']],
      [`${P}SELECT ?o WHERE { ex:PublicRecord ex:name* ?o }`, []],
    ] as const) {
      const body = await danAsView(query);
      if (body === undefined) continue;
      assert.deepEqual(
        valuesOf(body, 'o').map((value) => `"${value}"`),
        expected,
        query,
      );
    }
  });

  it('a variable-length path stepping over a predicate only row-restricted policies show is refused, even where another policy lifts the rows', async () => {
    for (const [caller, query] of [
      ['dan', `${P}SELECT ?o WHERE { ex:p2 ex:nothing? ?o }`],
      ['dan', `${P}SELECT ?o WHERE { ex:carol ex:salary? ?o }`],
      ['dan', 'SELECT (COUNT(*) AS ?n) WHERE { ?x <urn:x:nothing>* ?x }'],
      ['dan', `${P}SELECT ?o WHERE { ex:p3 ex:budget+ ?o }`],
      ['cat', `${P}SELECT ?s ?o WHERE { ?s (ex:lead/ex:email)? ?o }`],
    ] as const) {
      const answer = await askRows(rows().endpoint, query, caller);
      assert.equal(answer.status, 403, `${query}: ${answer.body}`);
      assert.equal(answer.body.trim().split('\n').length, 1, 'one line');
    }
  });

  it('a negated property set where a policy without a row rule lifts the rows but a row rule shows more columns is refused (it could step over one)', async () => {
    // gil-open hides rdf:type, which gil-projects shows for the projects: `ex:p1 a ex:Project` is in gil's view.
    for (const query of [
      `${P}SELECT * WHERE { ?s (!ex:value)+ ?o }`,
      `${P}SELECT * WHERE { ?s !ex:value ?o }`,
      `${P}SELECT * WHERE { GRAPH ?g { ?s (!ex:value)* ?o } }`,
    ]) {
      const answer = await askRows(rows().endpoint, query, 'gil');
      assert.equal(answer.status, 403, `${query}: ${answer.body}`);
      assert.match(answer.body, /negated property set cannot be held to .* row rules/);
      assert.equal(answer.body.trim().split('\n').length, 1, 'one line');
    }
    // Virtuoso wants a transitive path's start bound.
    const body = await assertAsView(rows(), 'gil', identityOf('gil'), `${P}SELECT ?o WHERE { ex:alice ex:name+ ?o }`);
    assert.deepEqual(valuesOf(body, 'o'), ['Alice'], 'a path over the open columns is answered');
    const types = await assertAsView(rows(), 'gil', identityOf('gil'), `${P}SELECT ?s WHERE { ?s a ex:Project }`);
    assert.ok(valuesOf(types, 's').includes('ex:p1'), "the projects' type is in gil's view");
  });

  it('a sequence never steps through a hidden middle node: each step is held to the view (erin and dan)', async () => {
    // p3 is in erin's rows (owned by her organisation), its lead carol is not: carol's name stays hidden.
    const erin = await assertAsView(rows(), 'erin', identityOf('erin'), `${P}SELECT ?n WHERE { ex:p3 ex:lead/ex:name ?n }`);
    assert.deepEqual(valuesOf(erin, 'n'), []);
    assert.match((await askRows(rows().endpoint, `${P}SELECT ?n WHERE { ex:p3 ex:lead/ex:name ?n }`, 'keeperMain')).body, /Carol/);
    // dan sees p3 whole and carol's name only: her salary, one step further, stays hidden.
    for (const query of [
      `${P}SELECT ?x WHERE { ex:p3 ex:lead/ex:salary ?x }`,
      `${P}SELECT ?p ?x WHERE { ?p ex:lead/ex:salary ?x }`,
      `${P}SELECT ?p ?x WHERE { ?p ex:lead ?l . ?l ex:salary ?x }`,
    ]) {
      const body = await assertAsView(rows(), 'dan', identityOf('dan'), query);
      assert.doesNotMatch(withoutBlankNodeLabels(body), /7000|8000|9000/, query);
    }
  });

  it('an inverse over hidden rows reads nothing of them', async () => {
    for (const query of [
      `${P}SELECT ?p WHERE { ex:carol ^ex:lead ?p }`,
      `${P}SELECT ?p WHERE { ex:bob ^ex:lead ?p }`,
      `${P}SELECT ?p ?n WHERE { ex:bob ^ex:lead ?p . ?p ex:name ?n }`,
      `${P}SELECT ?p WHERE { ex:bob ^(ex:lead|ex:note) ?p }`,
      `${P}SELECT ?p WHERE { ?x ^(ex:lead/ex:name) ?p }`,
    ]) {
      const body = await assertAsView(rows(), 'alice', identityOf('alice'), query);
      assert.doesNotMatch(body, /p2|p3|Borealis|Cygnus/, query);
    }
  });

  it('an alternative naming a visible and an unlisted predicate is refused as naming the unlisted one', async () => {
    for (const [caller, query] of [
      ['pub', `${P}SELECT ?s ?v WHERE { ?s (ex:name|ex:region) ?v }`],
      ['pub', `${P}SELECT ?s ?v WHERE { ?s ex:name|^ex:lead ?v }`],
      ['pub', `${P}SELECT ?s ?v WHERE { ?s ex:budget/(ex:name|ex:team) ?v }`],
      ['pub', `${P}SELECT ?s ?v WHERE { GRAPH <${'GRAPH_MAIN'}> { ?s (ex:budget|ex:email) ?v } }`],
    ] as const) {
      const text = query.replace('GRAPH_MAIN', rows().fixture.graphs.main);
      const answer = await askRows(rows().endpoint, text, caller);
      assert.equal(answer.status, 403, `${text}: ${answer.body}`);
      assert.equal(answer.body.trim().split('\n').length, 1, 'one line');
      assert.doesNotMatch(answer.body, /south|team-a|9000/);
    }
  });

  it('paths inside GRAPH ?g with a different rule per graph, and inside FILTER EXISTS and MINUS', async () => {
    for (const query of [
      `${P}SELECT ?g ?s ?n WHERE { GRAPH ?g { ?s ex:lead/ex:name ?n } }`,
      `${P}SELECT ?g ?s ?v WHERE { GRAPH ?g { ?s (ex:name|ex:budget) ?v } }`,
      `${P}SELECT ?g ?s WHERE { GRAPH ?g { ?s ^ex:lead/ex:name ?n } }`,
      `${P}SELECT ?p WHERE { ?p a ex:Project FILTER EXISTS { ?p ex:lead/ex:name ?n } }`,
      `${P}SELECT ?p WHERE { ?p a ex:Project FILTER NOT EXISTS { ?p ex:lead/ex:email ?e } }`,
      `${P}SELECT ?p WHERE { VALUES ?p { ex:p1 ex:p2 ex:p3 } MINUS { ?p ex:lead/ex:name ?n } }`,
      `${P}SELECT ?p WHERE { VALUES ?p { ex:p1 ex:p2 ex:p3 } MINUS { ?p (ex:budget|ex:name) ?v } }`,
      `${P}ASK { ex:p2 ex:lead/ex:name ?n }`,
      `${P}CONSTRUCT { ?p ex:seen ?n } WHERE { ?p ex:lead/ex:name|ex:name ?n }`,
      `${P}DESCRIBE ?x WHERE { ex:p1 ex:lead/^ex:lead ?x }`,
      `${P}SELECT (COUNT(*) AS ?n) WHERE { ?s (ex:name|ex:budget)/^ex:name ?x }`,
      `${P}SELECT ?s ?t WHERE { ?s (ex:note|ex:lead) _:k . _:k ex:team ?t }`,
    ]) {
      for (const caller of ['alice', 'bob'] as const) {
        const body = await assertAsView(rows(), caller, identityOf(caller), query);
        assert.doesNotMatch(body, /Cygnus|Second draft/, query);
        if (caller === 'alice') assert.doesNotMatch(body, /Borealis/, query);
      }
    }
  });

  it('SELECT * projects the variables as written, never the fresh variable of a step; with none to project it is refused', async () => {
    const body = await assertAsView(rows(), 'alice', identityOf('alice'), `${P}SELECT * WHERE { ?s ex:lead/ex:name ?n }`);
    assert.deepEqual((JSON.parse(body) as { head: { vars: string[] } }).head.vars.sort(), ['n', 's']);
    const inner = `${P}SELECT * WHERE { { SELECT * WHERE { ?s ex:lead/^ex:lead/ex:name ?n } } }`;
    assert.deepEqual(
      (JSON.parse(await assertAsView(rows(), 'alice', identityOf('alice'), inner)) as { head: { vars: string[] } }).head.vars.sort(),
      ['n', 's'],
    );
    const none = await askRows(rows().endpoint, `${P}SELECT * WHERE { ex:p1 ex:lead/ex:name "Alice" }`, 'alice');
    assert.equal(none.status, 403, none.body);
    assert.equal(none.body.trim().split('\n').length, 1, 'one line');
    // The same query for a caller without rows or columns is not expanded, and answered.
    assert.equal((await askRows(rows().endpoint, `${P}SELECT * WHERE { ex:p1 ex:lead/ex:name "Alice" }`, 'keeperMain')).status, 200);
  });

  it('an alternative is a union of solutions (SPARQL 1.1 §18.5): duplicates kept, on every store', async () => {
    const once = await assertAsView(rows(), 'alice', identityOf('alice'), `${P}SELECT ?s ?v WHERE { ?s ex:name ?v }`);
    const twice = await askRows(rows().endpoint, `${P}SELECT ?s ?v WHERE { ?s (ex:name|ex:name) ?v }`, 'alice');
    assert.equal(twice.status, 200, twice.body);
    assert.deepEqual(valuesOf(twice.body, 'v'), [...valuesOf(once, 'v'), ...valuesOf(once, 'v')].sort());
    assert.doesNotMatch(twice.body, /Borealis|Cygnus/);
  });

  it('one query shape, callers with and without rows, in both orders: each gets its own answer', async () => {
    const query = `${P}SELECT ?s ?n WHERE { ?s ex:lead/ex:name ?n }`;
    for (const order of [
      ['keeperMain', 'alice', 'keeperMain'],
      ['alice', 'keeperMain', 'alice'],
    ] as const) {
      for (const caller of order) {
        if (caller === 'alice') assert.doesNotMatch(await assertAsView(rows(), caller, identityOf(caller), query), /Bob|Carol/);
        else assert.match((await askRows(rows().endpoint, query, caller)).body, /Carol/);
      }
    }
  });
});
