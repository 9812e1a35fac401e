// Proves every rule of the configuration reader against real files and real environments.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig, readConfig, type GuardConfig } from '../../src/config/read-config.js';

const fixtures = resolve('test/fixtures/config');
const fullEnv = {
  STORE_HOST: 'store.internal:7200',
  STORE_CREDENTIAL: 'dXNlcjpzM2NyZXQ=',
  POLICY_DIR: 'more-policies',
  BOB_AGENT: 'https://example.org/agents/bob',
  BOB_KEY_SHA256: '9dea2ad2b340a617d9f3f37e0e025818e92347498224e82eab2c70e5b258d51e',
};
const fileContext = { configFile: '/etc/guard/config.json', env: {} };

/** Parses `json` with `env` and expects a ConfigError whose message matches every pattern. */
function rejects(json: unknown, patterns: readonly RegExp[], env: NodeJS.ProcessEnv = {}): string {
  let message = '';
  assert.throws(
    () => parseConfig(json, { configFile: '/etc/guard/config.json', env }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, `expected ConfigError, got ${String(error)}`);
      message = error.message;
      return true;
    },
  );
  assert.doesNotMatch(message, /[\r\n]/, 'one line');
  assert.match(message, /\(.+\)$/, 'ends with the fix in parentheses');
  for (const pattern of patterns) assert.match(message, pattern);
  return message;
}

describe('readConfig with a real file setting every key', () => {
  const file = resolve(fixtures, 'full.json');
  const config = readConfig({ GUARD_CONFIG: 'test/fixtures/config/full.json', ...fullEnv });

  it('reads every key, expands placeholders and resolves paths against the file folder', () => {
    const expected: GuardConfig = {
      configFile: file,
      upstream: 'https://store.internal:7200/repositories/main?infer=false',
      upstreamHeaders: { Authorization: 'Basic dXNlcjpzM2NyZXQ=', 'X-Literal': 'cost $$5 and ${NOT_A_VARIABLE}' },
      policies: [resolve(fixtures, 'policies/public.ttl'), resolve(fixtures, 'more-policies/staff.ttl')],
      rules: [resolve(fixtures, 'rules/groups.n3')],
      facts: [
        {
          name: 'members',
          query:
            'PREFIX groups: <https://example.org/groups#> CONSTRUCT { ?u groups:memberOf ?g } WHERE { GRAPH <https://example.org/app> { ?u <https://example.org/memberOf> ?g } }',
          refreshMs: 30000,
          timeoutMs: 5000,
          maxTriples: 200000,
          maxBytes: 65536000,
          maxStaleMs: 120000,
          policies: false,
        },
        {
          name: 'owners',
          query: 'CONSTRUCT { ?g <https://example.org/ownedBy> ?p } WHERE { ?g <https://example.org/owner> ?p }',
          refreshMs: 60000,
          timeoutMs: 30000,
          maxTriples: 1000000,
          maxBytes: 268435456,
          maxStaleMs: 600000,
          policies: false,
        },
      ],
      maxPrefixGraphs: 500,
      prefixRefreshMs: 30000,
      auth: {
        apiKeys: [
          {
            agent: 'https://example.org/agents/alice',
            groups: ['staff', 'editors'],
            sha256: '9e1e6baa1f8b3e0b2c5b8e08c6b6d2d2f1f6d6bfb0d0b9c9c2a6b5f8e7c6a1b2',
          },
          { agent: 'https://example.org/agents/bob', groups: [], sha256: fullEnv.BOB_KEY_SHA256 },
        ],
        trustedHeaders: { agent: 'x-remote-user', groups: 'x-remote-groups', agentPrefix: 'https://idp.example.org/users/' },
        jwt: {
          issuer: 'https://idp.example.org/realms/main',
          audience: ['sparql', 'account'],
          keys: { kind: 'jwksUri', uri: 'https://idp.example.org/realms/main/protocol/openid-connect/certs' },
          algorithms: ['RS256', 'ES256'],
          clockToleranceSeconds: 10,
          agentClaim: 'preferred_username',
          agentPrefix: 'https://idp.example.org/users/',
          groupsClaim: ['realm_access', 'roles'],
          claims: new Map(),
          jwksRefreshCooldownMs: 60000,
          cacheMaxEntries: 5000,
        },
      },
      watchPolicies: true,
      explain: true,
      timeoutMs: 15000,
      port: 9090,
      host: '127.0.0.1',
      path: '/data/sparql',
      cors: { origins: ['https://app.example.org', 'http://localhost:3000'], credentials: true },
      ui: false,
      planCache: { maxEntries: 500, maxBytes: 1048576 },
      baseIri: 'https://data.example.org/base/',
      maxQueryDepth: 32,
      allowedFunctions: ['http://example.org/functions#', 'http://example.org/geo/distance'],
      rowChecks: 'exists',
      datasetForm: 'graph-filters',
      workers: 4,
      embedded: { data: [resolve(fixtures, 'data/demo.trig'), '/srv/data/extra.ttl'] },
      http: { headersTimeoutMs: 5000, requestTimeoutMs: 20000, idleTimeoutMs: 4000, maxConnections: 300 },
      shutdown: { drainMs: 1000, graceMs: 8000 },
      trustRequestId: true,
      audit: { file: resolve(fixtures, 'audit/records.jsonl'), queryText: true, maxListed: 100, fullLists: false },
      metrics: { port: 9464, host: '0.0.0.0' },
    };
    assert.deepEqual(config, expected);
  });

  it('freezes the result deeply', () => {
    assert.ok(Object.isFrozen(config));
    assert.ok(Object.isFrozen(config.auth.apiKeys[0]?.groups));
    assert.ok(Object.isFrozen(config.auth.trustedHeaders));
    assert.ok(Object.isFrozen(config.upstreamHeaders));
    assert.ok(Object.isFrozen(config.embedded.data));
    assert.throws(() => {
      (config.policies as string[]).push('/tmp/evil.ttl');
    }, TypeError);
  });

  it('lets GUARD_UPSTREAM, PORT and GUARD_WORKERS override the file', () => {
    const overridden = readConfig({
      GUARD_CONFIG: file,
      ...fullEnv,
      GUARD_UPSTREAM: 'http://other:7878/query',
      PORT: '3000',
      GUARD_WORKERS: '8',
    });
    assert.equal(overridden.upstream, 'http://other:7878/query');
    assert.equal(overridden.port, 3000);
    assert.equal(overridden.workers, 8);
  });

  it('names an unset variable with its key path', () => {
    const { STORE_CREDENTIAL: _, ...missing } = fullEnv;
    assert.throws(() => readConfig({ GUARD_CONFIG: file, ...missing }), {
      name: 'ConfigError',
      message: /^config upstreamHeaders\.Authorization: environment variable STORE_CREDENTIAL is not set/,
    });
  });
});

describe('readConfig file errors', () => {
  it('defaults without GUARD_CONFIG, paths then relative to the working folder', () => {
    const config = readConfig({});
    assert.equal(config.configFile, undefined);
    assert.equal(config.upstream, undefined);
    assert.deepEqual(parseConfig({ policies: ['p.ttl'] }, { configFile: undefined, env: {} }).policies, [resolve('p.ttl')]);
  });

  it('under npm start, reads a relative GUARD_CONFIG from the folder npm was started in (INIT_CWD), not the package folder', () => {
    const typedIn = resolve('policies');
    const config = readConfig({ GUARD_CONFIG: 'demo.json', npm_lifecycle_event: 'start', INIT_CWD: typedIn });
    assert.equal(config.configFile, resolve(typedIn, 'demo.json'));
    // Another script (npm test spawning the bin) or none: the working folder, as any program.
    assert.throws(() => readConfig({ GUARD_CONFIG: 'demo.json', npm_lifecycle_event: 'test', INIT_CWD: typedIn }), /: not found/);
    assert.throws(() => readConfig({ GUARD_CONFIG: 'demo.json', INIT_CWD: typedIn }), /: not found/);
    assert.equal(
      readConfig({ GUARD_CONFIG: resolve('policies/demo.json'), npm_lifecycle_event: 'start', INIT_CWD: '/tmp' }).configFile,
      resolve('policies/demo.json'),
    );
  });

  it('refuses an empty GUARD_CONFIG', () => {
    assert.throws(() => readConfig({ GUARD_CONFIG: ' ' }), { name: 'ConfigError', message: /^environment variable GUARD_CONFIG: empty/ });
  });

  it('reports a missing file with its absolute path', () => {
    assert.throws(() => readConfig({ GUARD_CONFIG: 'test/fixtures/config/absent.json' }), {
      name: 'ConfigError',
      message: `config file ${resolve(fixtures, 'absent.json')}: not found (set GUARD_CONFIG to the path of a readable JSON file)`,
    });
  });

  it('reports a folder given as the file', () => {
    assert.throws(() => readConfig({ GUARD_CONFIG: fixtures }), { name: 'ConfigError', message: /: is a folder \(/ });
  });

  it('reports invalid JSON with line and column', () => {
    assert.throws(() => readConfig({ GUARD_CONFIG: 'test/fixtures/config/trailing-comma.json' }), {
      name: 'ConfigError',
      message: /trailing-comma\.json: invalid JSON \(Expected double-quoted property name at line 4 column 1\)/,
    });
  });

  it('never quotes the file in a JSON error, which may hold secrets', () => {
    assert.throws(
      () => readConfig({ GUARD_CONFIG: 'test/fixtures/config/unexpected-token.json' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /invalid JSON/);
        assert.doesNotMatch(error.message, /s3cret|nope|port/);
        assert.doesNotMatch(error.message, /[\r\n]/);
        return true;
      },
    );
  });

  it('refuses a key written twice in one object, which JSON.parse would read as the last one', () => {
    // Bob's second "groups" (spelt with an escape) would make him an admin, unseen by whoever reads the first.
    assert.throws(() => readConfig({ GUARD_CONFIG: 'test/fixtures/config/repeated-key.json' }), {
      name: 'ConfigError',
      message: 'config auth.apiKeys[1].groups: written twice, on lines 9 and 11 (JSON would keep only the last: remove one)',
    });
    const twice = join(mkdtempSync(join(tmpdir(), 'repeated-key-')), 'config.json');
    writeFileSync(twice, '{ "upstream": "http://s/q", "policies": ["p.ttl"], "explain": false,\n  "explain": true }');
    assert.throws(() => readConfig({ GUARD_CONFIG: twice }), { message: /^config explain: written twice, on lines 1 and 2 \(/ });
    // The same key in two objects, or one name as a key and a value, is no repeat.
    writeFileSync(twice, '{ "upstream": "http://s/q", "policies": ["explain"], "auth": { "apiKeys": [] }, "explain": false }');
    assert.equal(readConfig({ GUARD_CONFIG: twice }).explain, false);
  });

  it('accepts a UTF-8 byte order mark', () => {
    const config = readConfig({ GUARD_CONFIG: 'test/fixtures/config/with-bom.json' });
    assert.deepEqual(config.policies, [resolve(fixtures, 'p.ttl')]);
  });
});

describe('parseConfig defaults', () => {
  it('fills every default from an empty object', () => {
    const config = parseConfig({}, fileContext);
    assert.deepEqual(config, {
      configFile: '/etc/guard/config.json',
      upstream: undefined,
      upstreamHeaders: {},
      policies: [],
      rules: [],
      facts: [],
      maxPrefixGraphs: 10000,
      prefixRefreshMs: 60000,
      auth: { apiKeys: [], trustedHeaders: undefined, jwt: undefined },
      watchPolicies: false,
      explain: false,
      timeoutMs: 60000,
      port: 8080,
      host: '0.0.0.0',
      path: '/sparql',
      cors: { origins: undefined, credentials: false },
      ui: true,
      planCache: { maxEntries: 1000, maxBytes: 16 * 1024 * 1024 },
      baseIri: 'http://localhost/',
      maxQueryDepth: 64,
      allowedFunctions: [],
      rowChecks: 'join',
      datasetForm: 'auto',
      workers: 1,
      embedded: { data: [] },
      http: { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, idleTimeoutMs: 10_000, maxConnections: 400 },
      shutdown: { drainMs: 3000, graceMs: 10_000 },
      trustRequestId: false,
      audit: undefined,
      metrics: undefined,
    });
  });

  it('audit: off unless configured; a path resolved against the file, or - for standard output', () => {
    assert.deepEqual(parseConfig({ audit: { file: '-' } }, fileContext).audit, {
      file: '-',
      queryText: false,
      maxListed: 64,
      fullLists: false,
    });
    assert.equal(parseConfig({ audit: { file: 'logs/audit.jsonl' } }, fileContext).audit?.file, '/etc/guard/logs/audit.jsonl');
    rejects({ audit: {} }, [/^config audit\.file: missing/]);
    rejects({ audit: { file: ' ' } }, [/^config audit\.file: empty path/]);
    rejects({ audit: { file: '-', maxListed: -1 } }, [/^config audit\.maxListed: expected a whole number from 0/]);
    rejects({ audit: { file: '-', querytext: true } }, [/^config audit\.querytext: unknown key \(did you mean audit\.queryText\?\)/]);
  });

  it('metrics: off unless configured; the host defaults to the guard host; never the SPARQL port', () => {
    assert.deepEqual(parseConfig({ host: '127.0.0.1', metrics: { port: 9464 } }, fileContext).metrics, { port: 9464, host: '127.0.0.1' });
    assert.deepEqual(parseConfig({ metrics: { port: 0, host: '::1' } }, fileContext).metrics, { port: 0, host: '::1' });
    rejects({ metrics: {} }, [/^config metrics\.port: missing/]);
    rejects({ port: 9000, metrics: { port: 9000 } }, [/^config metrics\.port: is the SPARQL port 9000/]);
    rejects({ metrics: { port: 70000 } }, [/^config metrics\.port: expected a whole number from 0 to 65535/]);
    rejects({ metrics: { port: 9464, path: '/m' } }, [/^config metrics\.path: unknown key/]);
    rejects({ metrics: { port: 9464, host: 'a b' } }, [/^config metrics\.host: not a host name/]);
    rejects({ metrics: true }, [/^config metrics: expected an object/]);
  });

  it('resolves paths against the configuration file folder', () => {
    const config = parseConfig({ policies: ['a.ttl', '../b.ttl', '/abs/c.ttl'] }, fileContext);
    assert.deepEqual(config.policies, ['/etc/guard/a.ttl', '/etc/b.ttl', '/abs/c.ttl']);
    assert.equal(dirname(config.configFile ?? ''), '/etc/guard');
  });

  it('defaults agentPrefix to "" and groups header to undefined', () => {
    const config = parseConfig({ auth: { trustedHeaders: { agent: 'X-User' } } }, fileContext);
    assert.deepEqual(config.auth.trustedHeaders, { agent: 'x-user', groups: undefined, agentPrefix: '' });
  });
});

describe('parseConfig placeholders', () => {
  const env = { HOST: 'store', EMPTY: '' };

  it('replaces ${NAME} in every string value, including nested ones', () => {
    const config = parseConfig(
      {
        upstream: 'http://${HOST}:7878/query',
        host: '${HOST}',
        auth: { trustedHeaders: { agent: 'X-${HOST}', agentPrefix: 'https://${HOST}/' } },
        cors: { origins: ['https://${HOST}.example'] },
      },
      { configFile: undefined, env },
    );
    assert.equal(config.upstream, 'http://store:7878/query');
    assert.equal(config.host, 'store');
    assert.equal(config.auth.trustedHeaders?.agent, 'x-store');
    assert.equal(config.auth.trustedHeaders?.agentPrefix, 'https://store/');
    assert.deepEqual(config.cors.origins, ['https://store.example']);
  });

  it('keeps $${ as a literal ${ and a lone $ as it is', () => {
    const config = parseConfig({ upstreamHeaders: { 'X-A': 'a$b $${HOST} $$ $${' } }, { configFile: undefined, env });
    assert.equal(config.upstreamHeaders['X-A'], 'a$b ${HOST} $$ ${');
  });

  it('does not expand placeholders found inside a variable value', () => {
    const config = parseConfig({ upstreamHeaders: { 'X-A': '${NESTED}' } }, { configFile: undefined, env: { NESTED: '${HOST}' } });
    assert.equal(config.upstreamHeaders['X-A'], '${HOST}');
  });

  it('refuses an unset variable, naming key path and variable', () => {
    rejects({ policies: ['ok.ttl', '${NOPE}/p.ttl'] }, [/^config policies\[1\]: environment variable NOPE is not set \(/]);
    rejects({ auth: { apiKeys: [{ agent: 'https://a.example/', sha256: '${KEY_HASH}' }] } }, [
      /^config auth\.apiKeys\[0\]\.sha256: environment variable KEY_HASH is not set/,
    ]);
  });

  it('refuses an empty variable', () => {
    rejects(
      { upstreamHeaders: { Authorization: 'Bearer ${EMPTY}' } },
      [/^config upstreamHeaders\.Authorization: environment variable EMPTY is empty/],
      env,
    );
  });

  it('refuses an unterminated or malformed placeholder', () => {
    rejects({ host: '${HOST' }, [/^config host: unterminated \$\{ placeholder/], env);
    rejects({ host: '${HO-ST}' }, [/^config host: a \$\{\.\.\.\} placeholder must hold an environment variable name/], env);
    rejects({ host: '${}' }, [/^config host: a \$\{\.\.\.\} placeholder/], env);
  });
});

describe('parseConfig rejects', () => {
  it('a top level that is not an object', () => {
    rejects([], [/^config: expected an object, found an array \(/]);
    rejects(null, [/^config: expected an object, found null/]);
  });

  it('unknown keys at every level, with a suggestion when close', () => {
    rejects({ auth: { trustedHeader: { agent: 'X-User' } } }, [
      /^config auth\.trustedHeader: unknown key \(did you mean auth\.trustedHeaders\?\)/,
    ]);
    rejects({ Port: 1 }, [/^config Port: unknown key \(did you mean port\?\)/]);
    rejects({ zzzzzz: 1 }, [/^config zzzzzz: unknown key \(known keys here: upstream, /]);
    rejects({ planCache: { maxEntry: 1 } }, [/^config planCache\.maxEntry: unknown key \(did you mean planCache\.maxEntries\?\)/]);
    rejects({ embedded: { files: [] } }, [/^config embedded\.files: unknown key/]);
    rejects({ auth: { apiKeys: [{ agent: 'https://a.example/', sha256: 'a'.repeat(64), group: [] }] } }, [
      /^config auth\.apiKeys\[0\]\.group: unknown key \(did you mean auth\.apiKeys\[0\]\.groups\?\)/,
    ]);
    rejects({ auth: { trustedHeaders: { agent: 'X-User', prefix: 'x:' } } }, [/^config auth\.trustedHeaders\.prefix: unknown key/]);
    rejects({ 'weird key': 1 }, [/^config "weird key": unknown key/]);
  });

  it('wrong types', () => {
    rejects({ upstream: 42 }, [/^config upstream: expected a string, found a number/]);
    rejects({ explain: 'true' }, [/^config explain: expected true or false, found a string \(write true or false without quotes\)/]);
    rejects({ watchPolicies: 1 }, [/^config watchPolicies: expected true or false/]);
    rejects({ port: '8080' }, [/^config port: expected a whole number from 0 to 65535, found a string/]);
    rejects({ planCache: [] }, [/^config planCache: expected an object, found an array/]);
    rejects({ auth: 'keys' }, [/^config auth: expected an object, found a string/]);
    rejects({ upstreamHeaders: ['Authorization'] }, [/^config upstreamHeaders: expected an object/]);
    rejects({ upstreamHeaders: { 'X-A': 1 } }, [/^config upstreamHeaders\.X-A: expected a string, found a number/]);
    rejects({ auth: { apiKeys: {} } }, [/^config auth\.apiKeys: expected an array, found an object/]);
    rejects({ auth: { apiKeys: ['key'] } }, [/^config auth\.apiKeys\[0\]: expected an object, found a string/]);
  });

  it('policies, rules and embedded.data that are not arrays of distinct non-empty strings', () => {
    rejects({ policies: 'policies/a.ttl' }, [/^config policies: expected an array, found a string \(write an array of policy file paths/]);
    rejects({ policies: ['a.ttl', 7] }, [/^config policies\[1\]: expected a string, found a number/]);
    rejects({ policies: [''] }, [/^config policies\[0\]: empty path/]);
    rejects({ policies: ['a.ttl', './a.ttl'] }, [/^config policies\[1\]: same file as policies\[0\] \(list each file once\)/]);
    // A folder failed the load with `policy file cannot be read (EISDIR)`, naming neither key nor fix.
    const folder = resolve('test/fixtures/policy');
    rejects({ policies: [folder] }, [
      /^config policies\[0\]: \/.*\/test\/fixtures\/policy is a folder \(it must name one policy file: list the files of the folder one by one\)$/,
    ]);
    rejects({ rules: [folder] }, [/^config rules\[0\]: .* is a folder \(it must name one N3 rule file/]);
    rejects({ rules: [null] }, [/^config rules\[0\]: expected a string, found null/]);
    rejects({ embedded: { data: 'demo.trig' } }, [/^config embedded\.data: expected an array/]);
  });

  it('out-of-range and fractional numbers', () => {
    rejects({ timeoutMs: 0 }, [
      /^config timeoutMs: expected a whole number from 1 to 2147483647, found a number outside that range or with a fraction \(write an integer in milliseconds, default 60000\)/,
    ]);
    rejects({ timeoutMs: 1.5 }, [/^config timeoutMs: expected a whole number/]);
    rejects({ port: 65536 }, [/^config port: expected a whole number from 0 to 65535/]);
    rejects({ port: -1 }, [/^config port:/]);
    rejects({ maxQueryDepth: 0 }, [/^config maxQueryDepth: expected a whole number from 1 to 256/]);
    rejects({ maxQueryDepth: 257 }, [/^config maxQueryDepth:/]);
    rejects({ workers: 65 }, [/^config workers: expected a whole number from 1 to 64/]);
    rejects({ workers: 0 }, [/^config workers:/]);
    rejects({ planCache: { maxEntries: 0 } }, [/^config planCache\.maxEntries: expected a whole number from 1/]);
    rejects({ planCache: { maxBytes: 10 } }, [/^config planCache\.maxBytes: expected a whole number from 1024/]);
  });

  it('accepts the edges of each range', () => {
    const config = parseConfig({ port: 0, timeoutMs: 1, maxQueryDepth: 256, workers: 64 }, fileContext);
    assert.deepEqual([config.port, config.timeoutMs, config.maxQueryDepth, config.workers], [0, 1, 256, 64]);
  });

  it('bad upstream URLs', () => {
    rejects({ upstream: 'store:7878/query' }, [/^config upstream: must use http: or https:/]);
    rejects({ upstream: '/query' }, [/^config upstream: not an absolute URL \(give the store's query endpoint/]);
    rejects({ upstream: 'ftp://store/query' }, [/^config upstream: must use http: or https:/]);
    rejects({ upstream: 'http://user:pw@store/query' }, [
      /^config upstream: must not carry a user or password \(put the credential in upstreamHeaders\.Authorization/,
    ]);
    rejects({ upstream: 'http://store/query#x' }, [/^config upstream: must not have a #fragment/]);
    rejects({ upstream: 'http://store/query?default-graph-uri=urn:g' }, [
      /^config upstream: must not carry the SPARQL protocol parameter default-graph-uri/,
    ]);
    const message = rejects({ upstream: 'http://${USER_PW}@store/query' }, [/^config upstream: must not carry a user or password/], {
      USER_PW: 'u:s3cret',
    });
    assert.doesNotMatch(message, /s3cret/);
  });

  it('bad upstream headers', () => {
    rejects({ upstreamHeaders: { 'Bad Name': 'x' } }, [/^config upstreamHeaders\["Bad Name"\]: not a valid HTTP header name/]);
    rejects({ upstreamHeaders: { 'X-A': 'line\r\nInjected: yes' } }, [
      /^config upstreamHeaders\.X-A: value holds a line break, a control character/,
    ]);
    const message = rejects(
      { upstreamHeaders: { Authorization: 'Basic ${SECRET}' } },
      [/^config upstreamHeaders\.Authorization: value holds a line break/],
      { SECRET: 's3cret\nX-Evil: 1' },
    );
    assert.doesNotMatch(message, /s3cret|Evil/);
    rejects({ upstreamHeaders: { 'X-A': 'snow \u2603' } }, [/outside Latin-1/]);
    rejects({ upstreamHeaders: { 'X-Token': 'a', 'x-token': 'b' } }, [
      /^config upstreamHeaders\.x-token: same header as upstreamHeaders\.X-Token \(names ignore case\)/,
    ]);
    rejects({ upstreamHeaders: { 'Content-Type': 'text/plain' } }, [
      /^config upstreamHeaders\.Content-Type: this header is set by the guard itself \(remove it\)/,
    ]);
    rejects({ upstreamHeaders: { Host: 'store' } }, [/^config upstreamHeaders\.Host: this header is set by the guard itself/]);
    // The trace context is each request's own: a fixed traceparent was replaced unsaid, a fixed
    // tracestate went with every trace the guard started or continued.
    rejects({ upstreamHeaders: { traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01` } }, [
      /^config upstreamHeaders\.traceparent: this header is set by the guard itself/,
    ]);
    rejects({ upstreamHeaders: { TraceState: 'vendor=1' } }, [
      /^config upstreamHeaders\.TraceState: this header is set by the guard itself/,
    ]);
    // The store is always asked for identity (the guard passes bytes on as they come): an
    // operator's Accept-Encoding was accepted and replaced unsaid.
    rejects({ upstreamHeaders: { 'Accept-Encoding': 'gzip' } }, [
      /^config upstreamHeaders\.Accept-Encoding: this header is set by the guard itself \(remove it\)/,
    ]);
  });

  it('bad API key entries', () => {
    const good = { agent: 'https://example.org/agents/a', sha256: 'ab'.repeat(32) };
    rejects({ auth: { apiKeys: [good, good, { ...good, sha256: 'xyz' }] } }, [
      /^config auth\.apiKeys\[1\]\.sha256: same key as auth\.apiKeys\[0\] \(give each entry its own key\)/,
    ]);
    rejects({ auth: { apiKeys: [good, { ...good, sha256: 'AB'.repeat(32) }] } }, [
      /^config auth\.apiKeys\[1\]\.sha256: same key as auth\.apiKeys\[0\]/,
    ]);
    rejects({ auth: { apiKeys: [good, good, { ...good, sha256: 'ab'.repeat(31) }].slice(1, 3) } }, [
      /^config auth\.apiKeys\[1\]\.sha256: expected 64 hexadecimal characters \(run "sparql-guard hash-key" to make one\)$/,
    ]);
    rejects({ auth: { apiKeys: [{ ...good, sha256: 'g'.repeat(64) }] } }, [
      /^config auth\.apiKeys\[0\]\.sha256: expected 64 hexadecimal characters/,
    ]);
    rejects({ auth: { apiKeys: [{ agent: good.agent }] } }, [/^config auth\.apiKeys\[0\]\.sha256: missing \(run "sparql-guard hash-key"/]);
    rejects({ auth: { apiKeys: [{ sha256: good.sha256 }] } }, [/^config auth\.apiKeys\[0\]\.agent: missing/]);
    rejects({ auth: { apiKeys: [{ ...good, agent: 'alice' }] } }, [/^config auth\.apiKeys\[0\]\.agent: is not an absolute IRI/]);
    rejects({ auth: { apiKeys: [{ ...good, agent: 'https://example.org/a b' }] } }, [
      /^config auth\.apiKeys\[0\]\.agent: holds whitespace/,
    ]);
    rejects({ auth: { apiKeys: [{ ...good, agent: 'https://w3id.org/sparql-guard#Anonymous' }] } }, [
      /^config auth\.apiKeys\[0\]\.agent: lies in the reserved namespace/,
    ]);
    rejects({ auth: { apiKeys: [{ ...good, groups: 'staff' }] } }, [/^config auth\.apiKeys\[0\]\.groups: expected an array/]);
    rejects({ auth: { apiKeys: [{ ...good, groups: ['staff', ' staff'] }] } }, [
      /^config auth\.apiKeys\[0\]\.groups\[1\]: a group name must be non-empty, without surrounding spaces/,
    ]);
    rejects({ auth: { apiKeys: [{ ...good, groups: [''] }] } }, [
      /^config auth\.apiKeys\[0\]\.groups\[0\]: a group name must be non-empty/,
    ]);
  });

  it('bad JWT settings: missing issuer, audience or key source, two key sources, none or HMAC, private keys', () => {
    const base = { issuer: 'https://idp.example.org', audience: 'sparql', jwksUri: 'https://idp.example.org/certs' };
    rejects({ auth: { jwt: { ...base, issuer: undefined } } }, [/^config auth\.jwt\.issuer: missing \(give the iss value/]);
    rejects({ auth: { jwt: { ...base, audience: undefined } } }, [/^config auth\.jwt\.audience: missing/]);
    rejects({ auth: { jwt: { ...base, audience: [] } } }, [/^config auth\.jwt\.audience: empty/]);
    rejects({ auth: { jwt: { ...base, jwksUri: undefined } } }, [/^config auth\.jwt: no key source \(give exactly one of jwksUri/]);
    rejects({ auth: { jwt: { ...base, jwks: { keys: [{ kty: 'RSA', n: 'x', e: 'AQAB' }] } } } }, [
      /^config auth\.jwt: both jwksUri and jwks/,
    ]);
    rejects({ auth: { jwt: { ...base, jwksUri: 'ftp://idp/certs' } } }, [/^config auth\.jwt\.jwksUri: not an absolute http\(s\) URL/]);
    rejects({ auth: { jwt: { ...base, jwksUri: 'https://u:p@idp/certs' } } }, [
      /^config auth\.jwt\.jwksUri: must not carry a user or password/,
    ]);
    rejects({ auth: { jwt: { ...base, algorithms: ['none'] } } }, [
      /^config auth\.jwt\.algorithms\[0\]: unsigned tokens \(none\) are never accepted/,
    ]);
    rejects({ auth: { jwt: { ...base, algorithms: ['RS256', 'HS256'] } } }, [
      /^config auth\.jwt\.algorithms\[1\]: HMAC algorithms are refused/,
    ]);
    rejects({ auth: { jwt: { ...base, algorithms: ['XY1'] } } }, [
      /^config auth\.jwt\.algorithms\[0\]: not a known asymmetric JWS algorithm/,
    ]);
    rejects({ auth: { jwt: { ...base, algorithms: [] } } }, [/^config auth\.jwt\.algorithms: empty/]);
    const inline = (key: Record<string, unknown>) => ({ auth: { jwt: { ...base, jwksUri: undefined, jwks: { keys: [key] } } } });
    rejects(inline({ kty: 'oct', k: 'c2VjcmV0' }), [
      /^config auth\.jwt\.jwks\.keys\[0\]\.kty: expected RSA, EC or OKP \(symmetric oct keys are refused/,
    ]);
    rejects(inline({ kty: 'EC', crv: 'P-256', x: 'a', y: 'b', d: 'c' }), [/^config auth\.jwt\.jwks\.keys\[0\]\.d: a private key member/]);
    rejects({ auth: { jwt: { ...base, jwksUri: undefined, publicKey: 'not a key' } } }, [
      /^config auth\.jwt\.publicKey: not a PEM public key/,
    ]);
    rejects({ auth: { jwt: { ...base, jwksUri: undefined, publicKey: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----' } } }, [
      /^config auth\.jwt\.publicKey: cannot be read as a public key/,
    ]);
    rejects({ auth: { jwt: { ...base, agentPrefix: 'users/' } } }, [
      /^config auth\.jwt\.agentPrefix: the prefix and a claim value together is not an absolute IRI/,
    ]);
    rejects({ auth: { jwt: { ...base, groupsClaim: 'realm_access..roles' } } }, [/^config auth\.jwt\.groupsClaim: empty member name/]);
    rejects({ auth: { jwt: { ...base, claims: ['tenant'] } } }, [/^config auth\.jwt\.claims: expected an object, found an array/]);
    // A name that `?claim_NAME` or `{claim.NAME}` could not spell would never be read: refused, not ignored.
    rejects({ auth: { jwt: { ...base, claims: { 'org.tenant': 'tenant' } } } }, [
      /^config auth\.jwt\.claims\["org\.tenant"\]: not a name templates and row rules can read/,
    ]);
    rejects({ auth: { jwt: { ...base, claims: { tenant: '' } } } }, [/^config auth\.jwt\.claims\.tenant: empty member name/]);
    rejects({ auth: { jwt: { ...base, claims: { tenant: 7 } } } }, [
      /^config auth\.jwt\.claims\.tenant: expected an array, found a number/,
    ]);
    rejects({ auth: { jwt: { ...base, clockToleranceSeconds: 3600 } } }, [
      /^config auth\.jwt\.clockToleranceSeconds: expected a whole number from 0 to 300/,
    ]);
    rejects({ auth: { jwt: { ...base, jwksRefreshCooldownMs: 10 } } }, [
      /^config auth\.jwt\.jwksRefreshCooldownMs: expected a whole number from 1000/,
    ]);
    rejects({ auth: { jwt: { ...base, secret: 'x' } } }, [/^config auth\.jwt\.secret: unknown key/]);
  });

  it('JWT defaults: the asymmetric algorithms, sub as agent, no groups, 30 s tolerance and cooldown', () => {
    const config = parseConfig({ auth: { jwt: { issuer: 'https://idp', audience: 'sparql', jwksUri: 'https://idp/certs' } } }, fileContext);
    assert.deepEqual(config.auth.jwt, {
      issuer: 'https://idp',
      audience: ['sparql'],
      keys: { kind: 'jwksUri', uri: 'https://idp/certs' },
      algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'],
      clockToleranceSeconds: 30,
      agentClaim: 'sub',
      agentPrefix: '',
      groupsClaim: undefined,
      claims: new Map(),
      jwksRefreshCooldownMs: 30000,
      cacheMaxEntries: 10000,
    });
    const dotted = parseConfig(
      {
        auth: {
          jwt: { issuer: 'https://idp', audience: 'a', jwksUri: 'https://idp/c', groupsClaim: ['https://example.org/claims', 'groups'] },
        },
      },
      fileContext,
    );
    assert.deepEqual(dotted.auth.jwt?.groupsClaim, ['https://example.org/claims', 'groups']);
    const named = parseConfig(
      {
        auth: {
          jwt: {
            issuer: 'https://idp',
            audience: 'a',
            jwksUri: 'https://idp/c',
            claims: { tenant: ['https://example.org/claims/tenant'], org_id: 'org.id' },
          },
        },
      },
      fileContext,
    );
    assert.deepEqual(
      named.auth.jwt?.claims,
      new Map([
        ['tenant', ['https://example.org/claims/tenant']],
        ['org_id', ['org', 'id']],
      ]),
    );
  });

  it('bad trusted headers', () => {
    rejects({ auth: { trustedHeaders: {} } }, [/^config auth\.trustedHeaders\.agent: missing \(name the header/]);
    rejects({ auth: { trustedHeaders: { groups: 'X-Groups' } } }, [/^config auth\.trustedHeaders\.agent: missing/]);
    rejects({ auth: { trustedHeaders: { agent: 'X User' } } }, [/^config auth\.trustedHeaders\.agent: not a valid HTTP header name/]);
    rejects({ auth: { trustedHeaders: { agent: 'Authorization' } } }, [
      /^config auth\.trustedHeaders\.agent: collides with the API key header Authorization/,
    ]);
    rejects({ auth: { trustedHeaders: { agent: 'X-User', groups: 'x-api-key' } } }, [
      /^config auth\.trustedHeaders\.groups: collides with the API key header x-api-key/,
    ]);
    rejects({ auth: { trustedHeaders: { agent: 'Cookie' } } }, [
      /^config auth\.trustedHeaders\.agent: a standard HTTP header cannot carry a trusted identity/,
    ]);
    rejects({ auth: { trustedHeaders: { agent: 'X-User', groups: 'x-user' } } }, [
      /^config auth\.trustedHeaders\.groups: same header as auth\.trustedHeaders\.agent/,
    ]);
    rejects({ auth: { trustedHeaders: { agent: 'X-User', agentPrefix: 'users/' } } }, [
      /^config auth\.trustedHeaders\.agentPrefix: the prefix and a header value together is not an absolute IRI/,
    ]);
    rejects({ auth: { trustedHeaders: { agent: 'X-User', agentPrefix: 'https://idp/{user}' } } }, [
      /^config auth\.trustedHeaders\.agentPrefix: .*holds whitespace/,
    ]);
    rejects({ auth: { trustedHeaders: { agent: 'X-User', agentPrefix: 'https://w3id.org/sparql-guard#' } } }, [/reserved namespace/]);
    rejects({ auth: { trustedHeaders: { agent: 'X-User', agentPrefix: 3 } } }, [
      /^config auth\.trustedHeaders\.agentPrefix: expected a string/,
    ]);
  });

  it('bad endpoint paths', () => {
    rejects({ path: 'sparql' }, [/^config path: must start with \/ \(write e\.g\. \/sparql\)/]);
    rejects({ path: '/sparql/' }, [/^config path: must not end with \//]);
    rejects({ path: '/' }, [/^config path: must be \/-separated segments/]);
    rejects({ path: '/sparql?x=1' }, [/^config path: must be \/-separated segments/]);
    rejects({ path: '/sparql#x' }, [/^config path: must be/]);
    rejects({ path: '/a//b' }, [/^config path: must be/]);
    rejects({ path: '/:db/sparql' }, [/^config path: must be/]);
    rejects({ path: '/healthz' }, [/^config path: collides with the probe endpoint \/healthz/]);
    rejects({ path: '/readyz' }, [/^config path: collides with the probe endpoint \/readyz/]);
    assert.equal(parseConfig({ path: '/v1/ds-1/sparql' }, fileContext).path, '/v1/ds-1/sparql');
  });

  it('bad host, CORS origins and base IRI', () => {
    rejects({ host: '' }, [/^config host: not a host name or IP address/]);
    rejects({ host: 'local host' }, [/^config host:/]);
    rejects({ host: '[::1]' }, [/^config host:/]);
    assert.equal(parseConfig({ host: '::1' }, fileContext).host, '::1');
    rejects({ cors: { origins: 'https://app.example.org' } }, [/^config cors.origins: expected an array/]);
    rejects({ cors: { origins: ['https://app.example.org/'] } }, [
      /^config cors.origins\[0\]: not a serialized http\(s\) origin \(write origins as scheme:\/\/host\[:port\]/,
    ]);
    rejects({ cors: { origins: ['*'] } }, [/^config cors.origins\[0\]: not a serialized/]);
    rejects({ cors: { origins: ['https://App.example.org'] } }, [/^config cors.origins\[0\]:/]);
    rejects({ cors: { origins: ['ftp://files.example.org'] } }, [/^config cors.origins\[0\]:/]);
    rejects({ cors: { origin: ['https://app.example.org'] } }, [/^config cors.origin: unknown key \(did you mean cors.origins\?\)/]);
    rejects({ cors: { credentials: 'yes', origins: ['https://app.example.org'] } }, [/^config cors.credentials: expected true or false/]);
    assert.deepEqual(parseConfig({ cors: { origins: [] } }, fileContext).cors.origins, []);
    assert.deepEqual(parseConfig({ cors: { origins: '*' } }, fileContext).cors, { origins: undefined, credentials: false });
    rejects({ ui: 'on' }, [/^config ui: expected true or false/]);
  });

  it('credentials only with an explicit origin list; the old corsOrigins key names its replacement', () => {
    rejects({ cors: { credentials: true } }, [
      /^config cors.credentials: true needs an explicit origin list \(list the origins in cors.origins/,
    ]);
    rejects({ cors: { origins: '*', credentials: true } }, [/^config cors.credentials: true needs an explicit origin list/]);
    rejects({ corsOrigins: ['https://app.example.org'] }, [
      /^config corsOrigins: replaced by cors.origins \(write "cors": \{ "origins": \[...\] \} instead\)$/,
    ]);
    const config = parseConfig({ cors: { origins: ['https://app.example.org'], credentials: true } }, fileContext);
    assert.deepEqual(config.cors, { origins: ['https://app.example.org'], credentials: true });
    rejects({ baseIri: 'relative/' }, [/^config baseIri: not an absolute IRI/]);
    rejects({ baseIri: 'http://x/ y' }, [/^config baseIri: not an absolute IRI/]);
    rejects({ baseIri: 'http://x/#frag' }, [/^config baseIri: must not have a #fragment/]);
  });

  it('datasetForm: auto, clauses or graph-filters, anything else named with the three choices', () => {
    for (const form of ['auto', 'clauses', 'graph-filters'])
      assert.equal(parseConfig({ datasetForm: form }, fileContext).datasetForm, form);
    rejects({ datasetForm: 'filters' }, [
      /^config datasetForm: not a dataset form \(write "auto" \(graph filters where the store says it is Virtuoso, clauses elsewhere\), "clauses" \(FROM and FROM NAMED, every store\) or "graph-filters"/,
    ]);
    rejects({ datasetForm: 'CLAUSES' }, [/^config datasetForm: not a dataset form/]);
    rejects({ datasetForm: 1 }, [/^config datasetForm: expected a string/]);
  });

  it('rowChecks: join or exists, anything else named with both choices', () => {
    rejects({ rowChecks: 'filter' }, [/^config rowChecks: not a form of row check \(write "join" \(right on every store\) or "exists"/]);
    rejects({ rowChecks: 'JOIN' }, [/^config rowChecks: not a form of row check/]);
    rejects({ rowChecks: true }, [/^config rowChecks: expected a string/]);
  });

  it('bad allowedFunctions: not an array, not an absolute IRI, or in a store property-function namespace', () => {
    rejects({ allowedFunctions: 'http://example.org/fn#' }, [/^config allowedFunctions: expected an array/]);
    rejects({ allowedFunctions: [42] }, [/^config allowedFunctions\[0\]: expected a string/]);
    rejects({ allowedFunctions: ['http://ok.example/f', 'fn#'] }, [/^config allowedFunctions\[1\]: not an absolute IRI/]);
    for (const bad of [
      'http://x/ f',
      'http://x/<f>',
      'http://x/"f',
      'http://x/{f}',
      'http://x/f|g',
      'http://x/^f',
      'http://x/`f',
      'http://x/\\f',
      'http://x/\tf',
    ]) {
      rejects({ allowedFunctions: [bad] }, [/^config allowedFunctions\[0\]: not an absolute IRI/]);
    }
    // Exact IRIs and namespaces in the denied namespaces, case-blind, and namespaces covering one of them.
    const denied = [
      'bif:contains',
      'BIF:',
      'sql:',
      'java:org.example.Evil',
      'http://jena.apache.org/ARQ/property#splitIRI',
      'http://jena.hpl.hp.com/ARQ/property#',
      'http://jena.apache.org/ARQ/list#member',
      'http://jena.hpl.hp.com/ARQ/list#',
      'http://jena.apache.org/text#query',
      'http://jena.apache.org/spatial#nearby',
      'http://www.openlinksw.com/schemas/bif#',
      'http://www.openlinksw.com/schemas/sql#',
      'HTTP://JENA.APACHE.ORG/text#',
      'http://jena.apache.org/',
      'http://www.openlinksw.com/schemas/',
    ];
    for (const entry of denied) {
      rejects({ allowedFunctions: ['http://example.org/fn#', entry] }, [
        /^config allowedFunctions\[1\]: lies in or covers the store namespace \S+, whose functions run code in the store \(remove it/,
      ]);
    }
  });

  it('refuses the allowedFunctions entries the planner once refused itself: it now relies on this check', () => {
    for (const entry of [
      'bif:contains',
      'SQL:',
      'java:x.Y',
      'http://jena.apache.org/ARQ/property#concat',
      'http://jena.apache.org/',
      'http://www.openlinksw.com/schemas/',
    ]) {
      rejects({ allowedFunctions: ['http://example.org/ns#', entry] }, [
        /^config allowedFunctions\[1\]: lies in or covers the store namespace/,
      ]);
    }
    for (const entry of ['ns#', 'http://x/ f', 'http://x/<f>']) rejects({ allowedFunctions: [entry] }, [/absolute IRI/]);
  });

  it('accepts allowedFunctions of exact IRIs and namespaces, dropping duplicates', () => {
    const entries = ['http://example.org/fn#', 'http://example.org/fn#', 'urn:example:len', 'http://jena.apache.org/ARQ/function#'];
    assert.deepEqual(parseConfig({ allowedFunctions: entries }, fileContext).allowedFunctions, entries.slice(1));
    assert.deepEqual(parseConfig({ allowedFunctions: [] }, fileContext).allowedFunctions, []);
    assert.deepEqual(
      parseConfig({ allowedFunctions: ['${FN_NS}'] }, { configFile: undefined, env: { FN_NS: 'http://example.org/fn/' } }).allowedFunctions,
      ['http://example.org/fn/'],
    );
  });
});

describe('environment overrides', () => {
  const parse = (env: NodeJS.ProcessEnv): GuardConfig =>
    parseConfig({ upstream: 'http://file/query', port: 1, workers: 2 }, { configFile: undefined, env });

  it('apply over the file values', () => {
    const config = parse({ GUARD_UPSTREAM: 'https://env.example/sparql', PORT: '0', GUARD_WORKERS: '64' });
    assert.equal(config.upstream, 'https://env.example/sparql');
    assert.equal(config.port, 0);
    assert.equal(config.workers, 64);
    assert.equal(parseConfig({}, { configFile: undefined, env: { GUARD_UPSTREAM: 'http://env/q' } }).upstream, 'http://env/q');
  });

  it('are checked, naming the variable', () => {
    assert.throws(() => parse({ GUARD_UPSTREAM: 'file:///etc/passwd' }), {
      name: 'ConfigError',
      message: /^environment variable GUARD_UPSTREAM: must use http: or https:/,
    });
    assert.throws(() => parse({ GUARD_UPSTREAM: '' }), { name: 'ConfigError', message: /^environment variable GUARD_UPSTREAM: empty/ });
    assert.throws(() => parse({ PORT: '80a' }), {
      name: 'ConfigError',
      message: /^environment variable PORT: expected a whole number from 0 to 65535/,
    });
    assert.throws(() => parse({ PORT: '65536' }), { name: 'ConfigError', message: /^environment variable PORT:/ });
    assert.throws(() => parse({ PORT: '' }), { name: 'ConfigError', message: /^environment variable PORT:/ });
    assert.throws(() => parse({ GUARD_WORKERS: '0' }), {
      name: 'ConfigError',
      message: /^environment variable GUARD_WORKERS: expected a whole number from 1 to 64/,
    });
    assert.throws(() => parse({ GUARD_WORKERS: '1.5' }), { name: 'ConfigError', message: /^environment variable GUARD_WORKERS:/ });
  });

  it('do not hide a bad value in the file', () => {
    assert.throws(() => parseConfig({ port: 'x' }, { configFile: undefined, env: { PORT: '80' } }), {
      name: 'ConfigError',
      message: /^config port:/,
    });
    assert.throws(() => parseConfig({ upstream: 'ftp://x' }, { configFile: undefined, env: { GUARD_UPSTREAM: 'http://y/' } }), {
      name: 'ConfigError',
      message: /^config upstream:/,
    });
  });
});
