// Python's SPARQL clients from Debian's packages (python3-sparqlwrapper, python3-rdflib) send a key to the guard, and their users can read the guard's refusal line.

import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { KEYS, select, useTestGuard } from '../helpers/start-test-guard.js';

const run = promisify(execFile);

/** Debian's interpreter, where Debian's packages are installed (a pyenv or venv python may lack them). */
const PYTHON = '/usr/bin/python3';

/** Why the test cannot run here, or undefined. */
function missing(): string | undefined {
  try {
    execFileSync(PYTHON, ['-c', 'import SPARQLWrapper, rdflib'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return `${PYTHON} cannot import SPARQLWrapper and rdflib (apt-get install python3-sparqlwrapper python3-rdflib)`;
  }
}

const why = missing();
const COUNT = 'SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }';
const REFUSED = 'SELECT * WHERE { SERVICE <http://example.org/elsewhere> { ?s ?p ?o } }';

/** Each way of sending a key, as the Clients table of docs/authentication.md writes it; each prints one JSON line. */
const SCRIPT = String.raw`
import json, sys
from urllib.error import HTTPError
from SPARQLWrapper import SPARQLWrapper, JSON
from rdflib.plugins.stores.sparqlstore import SPARQLStore

endpoint, key, count, refused = sys.argv[1:5]

def wrapper(query):
    sparql = SPARQLWrapper(endpoint)
    sparql.setQuery(query)
    sparql.setReturnFormat(JSON)
    return sparql

out = {}
sparql = wrapper(count)
sparql.setCredentials('user', key)
out['SPARQLWrapper setCredentials'] = sparql.query().convert()['results']['bindings'][0]['n']['value']
sparql = wrapper(count)
sparql.addCustomHttpHeader('Authorization', 'Bearer ' + key)
out['SPARQLWrapper Bearer header'] = sparql.query().convert()['results']['bindings'][0]['n']['value']
out['rdflib auth'] = str(list(SPARQLStore(endpoint, auth=('user', key)).query(count))[0][0])
out['rdflib Bearer header'] = str(list(SPARQLStore(endpoint, headers={'Authorization': 'Bearer ' + key}).query(count))[0][0])

sparql = wrapper(refused)
sparql.addCustomHttpHeader('Authorization', 'Bearer ' + key)
try:
    sparql.query()
except HTTPError as error:
    out['SPARQLWrapper refusal'] = [type(error).__name__, error.code, error.read().decode()]
try:
    list(SPARQLStore(endpoint, auth=('user', key)).query(refused))
except ValueError as error:
    cause = error.__context__
    out['rdflib refusal'] = [type(error).__name__, str(error), cause.code, cause.read().decode()]
print(json.dumps(out))
`;

describe('Python clients through the guard', { skip: why === undefined ? false : `the Python clients cannot run: ${why}` }, () => {
  const guard = useTestGuard();

  it('SPARQLWrapper and rdflib send the key (Basic or Bearer) and see its grant; a refusal keeps the guard line', async () => {
    const keyed = (await select(guard().endpoint, COUNT, { key: KEYS.beta })).rows[0]?.n;
    const anonymous = (await select(guard().endpoint, COUNT)).rows[0]?.n;
    assert.notEqual(keyed, anonymous);
    const guardLine = await (
      await fetch(`${guard().endpoint}?query=${encodeURIComponent(REFUSED)}`, { headers: { 'x-api-key': KEYS.beta } })
    ).text();
    assert.match(guardLine, /^[^\n]*SERVICE[^\n]*\n$/);

    const before = guard().logs.length;
    const { stdout } = await run(PYTHON, ['-c', SCRIPT, guard().endpoint, KEYS.beta, COUNT, REFUSED], { timeout: 60_000 });
    const out = JSON.parse(stdout) as Record<string, unknown>;
    for (const way of ['SPARQLWrapper setCredentials', 'SPARQLWrapper Bearer header', 'rdflib auth', 'rdflib Bearer header']) {
      assert.equal(out[way], keyed, way);
    }
    assert.deepEqual(out['SPARQLWrapper refusal'], ['HTTPError', 403, guardLine]);
    // rdflib 6 turns every refusal into this ValueError; the guard's status and line are on the error it chains.
    assert.deepEqual(out['rdflib refusal'], [
      'ValueError',
      'You did something wrong formulating either the URI or your SPARQL query',
      403,
      guardLine,
    ]);
    const agents = new Set(
      guard()
        .logs.slice(before)
        .map((line) => line.agent),
    );
    assert.deepEqual([...agents], ['http://example.org/agents/beta-user'], 'every request ran as beta, none as anonymous');
  });
});
