// The real `sparql-guard` bin: hash-key, check and explain, their output and their exit codes.

import assert from 'node:assert/strict';
import { spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { loadPolicySet } from '../../src/policy/load/load-policy-set.js';
import type { PolicySet, Principal } from '../../src/policy/policy-set.js';
import { shippedRuleFiles } from '../../src/policy/rules/shipped-rule-files.js';
import { generatePolicySet, organisationShape } from '../helpers/generate-policy-set.js';

const BIN = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
const POLICIES = resolve('test/fixtures/integration/policies.ttl');
const KEY = 'test-key-beta-0123456789abcdef';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the bin; without `input`, stdin is /dev/null. GUARD_* variables of the test run are cleared. */
function run(args: string[], options: { input?: string | Buffer; env?: Record<string, string> } = {}): Run {
  const { GUARD_CONFIG: _c, GUARD_UPSTREAM: _u, ...env } = process.env;
  const spawnOptions: SpawnSyncOptions = {
    encoding: 'utf8',
    env: { ...env, ...options.env },
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    timeout: 60_000,
    maxBuffer: 1 << 28,
    ...(options.input !== undefined && { input: options.input }),
  };
  const result = spawnSync(process.execPath, [BIN, ...args], spawnOptions);
  // Under c8 (NODE_V8_COVERAGE), node itself may add this line when a worker thread (the embedded
  // store's) is still running at exit: not the bin's output, which the tests hold to the byte.
  const stderr = String(result.stderr).replace(/^Failed to stringify coverage profile result\n/m, '');
  return { status: result.status, stdout: String(result.stdout), stderr };
}

let folder: string;
let configFile: string;
before(() => {
  folder = mkdtempSync(join(tmpdir(), 'sparql-guard-cli-'));
  configFile = join(folder, 'guard.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      policies: [POLICIES],
      auth: { apiKeys: [{ agent: 'http://example.org/agents/beta-user', groups: ['beta'], sha256: sha256(KEY) }] },
    }),
  );
});
after(() => rmSync(folder, { recursive: true, force: true }));

/** Writes a config file in the test folder and returns its path. */
function config(name: string, json: unknown): string {
  const file = join(folder, name);
  writeFileSync(file, typeof json === 'string' ? json : JSON.stringify(json));
  return file;
}

describe('sparql-guard (no command or an unknown one)', () => {
  it('prints the usage: on stdout with --help (exit 0), on stderr for an unknown command (exit 2)', () => {
    const help = run(['--help']);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /usage: sparql-guard \[serve \| check \| explain \| hash-key\]/);
    // A command's --help was an unknown option (exit 2), and serve's said it takes no options.
    for (const command of ['serve', 'check', 'explain', 'hash-key']) {
      for (const flag of ['--help', '-h']) {
        const commandHelp = run([command, flag]);
        assert.equal(commandHelp.status, 0, `${command} ${flag}: ${commandHelp.stderr}`);
        assert.equal(commandHelp.stdout, help.stdout);
        assert.equal(commandHelp.stderr, '');
      }
    }
    const unknown = run(['frobnicate']);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /^sparql-guard: unknown command 'frobnicate'\nusage: sparql-guard/);
  });

  it('says in its first line why a command line cannot run', () => {
    const why = (args: string[]) => {
      const result = run(args);
      assert.equal(result.status, 2, args.join(' '));
      assert.match(result.stderr, /\nusage: sparql-guard/);
      return result.stderr.split('\n')[0];
    };
    assert.equal(why(['chekc']), "sparql-guard: unknown command 'chekc' (did you mean check?)");
    assert.equal(why(['serve', '--port', '9000']), 'sparql-guard: serve takes no options: the configuration comes from GUARD_CONFIG');
    assert.equal(why(['--version', 'x']), 'sparql-guard: --version takes no arguments');
    assert.equal(why(['\u0007bell']), 'sparql-guard: unknown command');
  });

  it('refuses an option that takes one value given twice, naming it (parseArgs kept the last silently)', () => {
    const cases: [string[], string][] = [
      [
        ['check', '--why', 'https://example.org/a', '--why', 'https://example.org/b'],
        'sparql-guard check: option --why is given twice (give it once)',
      ],
      [['check', '--config', configFile, '--config=other.json'], 'sparql-guard check: option --config is given twice (give it once)'],
      [
        ['explain', '--agent', 'https://example.org/a', '--agent', 'https://example.org/b', '--query', 'ASK {}'],
        'sparql-guard explain: option --agent is given twice (give it once)',
      ],
      [
        ['hash-key', '--agent', 'https://example.org/a', '--agent', 'https://example.org/b'],
        'sparql-guard hash-key: option --agent is given twice (give it once)',
      ],
    ];
    for (const [args, line] of cases) {
      const result = run(args);
      assert.equal(result.status, 2, args.join(' '));
      assert.equal(result.stderr.split('\n')[0], line);
      assert.match(result.stderr, /\nusage: sparql-guard/);
    }
    // Options that may repeat still do.
    const groups = run(['check', '--offline', '--config', configFile, '--why', 'https://example.org/a', '--group', 'x', '--group', 'y']);
    assert.equal(groups.status, 0, groups.stderr);
  });
});

describe('sparql-guard hash-key', () => {
  it("without a key on stdin, prints a new random key and its config entry, whose sha256 is the key's", () => {
    const first = run(['hash-key']);
    assert.equal(first.status, 0, first.stderr);
    const key = /^key: (sg_[A-Za-z0-9_-]{43})$/m.exec(first.stdout)?.[1];
    assert.ok(key, first.stdout);
    const entry = JSON.parse(/^config entry: (.*)$/m.exec(first.stdout)?.[1] ?? 'null') as {
      agent: string;
      groups: string[];
      sha256: string;
    };
    assert.equal(entry.sha256, sha256(key));
    assert.deepEqual(entry.groups, []);
    assert.notEqual(run(['hash-key']).stdout, first.stdout, 'a new key every time');
  });

  it('hashes a key piped in (trailing newline ignored); with --agent and --group prints the entry', () => {
    const piped = run(['hash-key'], { input: `${KEY}\n` });
    assert.equal(piped.status, 0, piped.stderr);
    assert.equal(piped.stdout, `${sha256(KEY)}\n`);
    assert.doesNotMatch(piped.stdout + piped.stderr, new RegExp(KEY), 'the key itself is never printed');
    const entry = run(['hash-key', '--agent', 'https://example.org/agents/ann', '--group', 'hr', '--group', 'ops'], { input: KEY });
    assert.equal(
      entry.stdout,
      `config entry: ${JSON.stringify({ agent: 'https://example.org/agents/ann', groups: ['hr', 'ops'], sha256: sha256(KEY) })}\n`,
    );
  });

  it('prints only entries the configuration accepts: a group name it refuses is refused here (exit 2)', () => {
    // `--group ''` printed {"groups":[""]}, which the configuration then refused at start.
    for (const group of ['', ' hr', 'hr ', 'a\tb']) {
      for (const input of [undefined, `${KEY}\n`]) {
        const result = run(['hash-key', '--agent', 'https://example.org/agents/ann', '--group', 'ops', '--group', group], {
          ...(input !== undefined && { input }),
        });
        assert.equal(result.status, 2, JSON.stringify(group));
        assert.equal(result.stdout, '');
        assert.equal(
          result.stderr.split('\n')[0],
          `sparql-guard hash-key: --group ${JSON.stringify(group)}: a group name must be non-empty, without surrounding spaces or control characters`,
        );
      }
    }
    const printed = run(['hash-key', '--agent', 'https://example.org/agents/ann', '--group', 'ops', '--group', 'hr team'], { input: KEY });
    const entry = JSON.parse(printed.stdout.replace(/^config entry: /, '')) as unknown;
    assert.equal(run(['check', '--offline', '--config', config('printed-entry.json', { auth: { apiKeys: [entry] } })]).status, 0);
  });

  it('refuses an empty stdin and an agent that is not an IRI (exit 2)', () => {
    const empty = run(['hash-key'], { input: '' });
    assert.equal(empty.status, 2);
    assert.match(empty.stderr, /stdin is empty/);
    const bad = run(['hash-key', '--agent', 'ann']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--agent is not an absolute IRI/);
    // A key that is not UTF-8 would be hashed with U+FFFD in place of its bytes: another key's hash.
    const latin1 = run(['hash-key'], { input: Buffer.from('sg_schlüssel\n', 'latin1') });
    assert.equal(latin1.status, 2);
    assert.equal(latin1.stdout, '');
    assert.match(latin1.stderr, /^sparql-guard hash-key: stdin is not valid UTF-8 \(line 1; [^\n]*\n$/);
    // In UTF-8 it is read, but a header carries "ü" as two Latin-1 characters: no request could match its hash.
    for (const [key, codePoint] of [
      ['sg_schlüssel', 'U+00FC'],
      ['sg_a\tb', 'U+0009'],
      ['sg_😀', 'U+1F600'],
    ]) {
      const outside = run(['hash-key'], { input: `${key}\n` });
      assert.equal(outside.status, 2, key);
      assert.equal(outside.stdout, '');
      assert.ok(outside.stderr.startsWith(`sparql-guard hash-key: the key holds ${codePoint}: a key is printable ASCII`), outside.stderr);
    }
  });
});

/** The listing as check printed it before it was written in pieces: per principal label in order of its first policy, string unions sorted. */
function slowListing(set: PolicySet): { principal: string; policies: string[]; graphs: string[] }[] {
  const label = (principal: Principal) =>
    principal.kind === 'everyone'
      ? 'Everyone'
      : principal.kind === 'authenticated'
        ? 'AuthenticatedAgent'
        : principal.kind === 'agent'
          ? `<${principal.agent}>`
          : `group ${JSON.stringify(principal.group)}`;
  const entries = new Map<string, { policies: string[]; graphs: Set<string> }>();
  for (const policy of set.policies) {
    for (const principal of policy.principals) {
      const key = label(principal);
      const entry = entries.get(key) ?? { policies: [], graphs: new Set<string>() };
      entries.set(key, entry);
      entry.policies.push(`<${policy.iri}>`);
      for (const graph of policy.graphs) entry.graphs.add(graph);
    }
  }
  return [...entries].map(([principal, entry]) => ({
    principal,
    policies: entry.policies,
    graphs: [...entry.graphs].sort().map((graph) => `<${graph}>`),
  }));
}

describe('sparql-guard check', () => {
  it('warns about a granted, hidden or row IRI a store may refuse to read in a query (not NFC, private use), and still loads', () => {
    const policies = join(folder, 'store-reading.ttl');
    // U+212B ANGSTROM SIGN is not NFC (its NFC form is U+00C5); U+E000 is private use: Jena 4.5 answers 500 to a query naming either.
    writeFileSync(
      policies,
      `@prefix guard: <https://w3id.org/sparql-guard#> .
<https://example.org/p/odd> a guard:Policy ; guard:agent guard:AuthenticatedAgent ;
  guard:readGraph <https://example.org/g/\u212b>, <https://example.org/g/\u00c5>, <https://example.org/g/plain> ;
  guard:hidePath <https://example.org/ns/p?\ue000> .
<https://example.org/p/rows> a guard:Policy ; guard:agent guard:AuthenticatedAgent ;
  guard:readGraph <https://example.org/g/plain> ;
  guard:rowClass <https://example.org/ns/C> ; guard:rowData <https://example.org/g/members\u212b> .
`,
    );
    const result = run(['check', '--offline', '--config', config('store-reading.json', { policies: [policies] })]);
    assert.equal(result.status, 0, result.stderr);
    const warnings = result.stdout.split('\n').filter((line) => line.startsWith('warning: '));
    assert.deepEqual(
      warnings.map((line) => line.replace(/ is not in Unicode.*| holds a private-use.*/, '')),
      [
        'warning: the graph <https://example.org/g/\u212b>',
        'warning: the hidden path <https://example.org/ns/p?\ue000>',
        'warning: the row data graph <https://example.org/g/members\u212b>',
      ],
      result.stdout,
    );
    assert.match(warnings[0] ?? '', /Jena refuses such an IRI in a query: a caller's query naming it may fail on such a store$/);
  });

  it('lists each principal with its policies and graphs, and exits 0', () => {
    const result = run(['check', '--config', configFile]);
    assert.equal(result.status, 0, result.stderr);
    const P = 'http://example.org/policies/';
    const G = 'http://example.org/graphs/';
    assert.match(result.stdout, /^ok: 4 policies from 1 policy file\(s\), 1 rule file\(s\); config /);
    assert.ok(result.stdout.includes(`Everyone\n  policies: <${P}everyone>\n  graphs:   <${G}a>\n`), result.stdout);
    assert.ok(result.stdout.includes(`group "beta"\n  policies: <${P}beta>\n  graphs:   <${G}b>\n`));
    assert.ok(
      result.stdout.includes(`<http://example.org/agents/keeper>\n  policies: <${P}keeper>\n  graphs:   <${G}a> <${G}b> <${G}secret>\n`),
    );
  });

  it('--json prints the same listing as JSON; GUARD_CONFIG works like --config', () => {
    const result = run(['check', '--json'], { env: { GUARD_CONFIG: configFile } });
    assert.equal(result.status, 0, result.stderr);
    const json = JSON.parse(result.stdout) as {
      policies: number;
      principals: { principal: string; policies: string[]; graphs: string[] }[];
    };
    assert.equal(json.policies, 4);
    assert.deepEqual(json.principals[0], {
      principal: 'Everyone',
      policies: ['<http://example.org/policies/everyone>'],
      graphs: ['<http://example.org/graphs/a>'],
    });
  });

  it('prints the listing of a generated organisation under rules exactly as JSON.stringify of the plain listing would', async () => {
    const { policyTurtle, hierarchyN3 } = generatePolicySet(organisationShape(400, 7));
    const policyFiles = [config('org.ttl', policyTurtle), resolve('test/fixtures/policy/targeting.ttl')];
    const rules = [
      ...['group-hierarchy.n3', 'group-membership.n3', 'graph-collections.n3'].map((name) => resolve('rules/examples', name)),
      config('org-hierarchy.n3', hierarchyN3),
    ];
    const orgConfig = config('org.json', { policies: policyFiles, rules });
    const json = run(['check', '--json', '--config', orgConfig]);
    assert.equal(json.status, 0, json.stderr);
    const parsed = JSON.parse(json.stdout) as { policies: number; principals: unknown };
    // The layout is JSON.stringify's with two spaces, to the byte.
    assert.equal(json.stdout, `${JSON.stringify(parsed, null, 2)}\n`);
    const expected = slowListing(await loadPolicySet({ policyFiles, ruleFiles: [...shippedRuleFiles(), ...rules] }));
    assert.equal(parsed.policies, 400 + 7);
    assert.ok(expected.length > 400, `${expected.length} principals`);
    assert.ok(expected.some((entry) => entry.graphs.length === 0) && expected.some((entry) => entry.graphs.length > 25));
    assert.deepEqual(parsed.principals, expected);

    const text = run(['check', '--config', orgConfig]);
    assert.equal(text.status, 0, text.stderr);
    const listed = expected.map(
      (entry) => `${entry.principal}\n  policies: ${entry.policies.join(' ')}\n  graphs:   ${entry.graphs.join(' ') || '(none)'}\n`,
    );
    const start = text.stdout.indexOf(`${expected[0]?.principal}\n  policies: `);
    const end = text.stdout.lastIndexOf('a caller gets the union of');
    assert.equal(text.stdout.slice(start, end), listed.join(''));

    // A reader that stops after the first chunk (`check --json | head`) ends the output, not the command.
    const child = spawn(process.execPath, [BIN, 'check', '--json', '--config', orgConfig], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (data: Buffer) => (stderr += String(data)));
    child.stdout.once('data', () => child.stdout.destroy());
    const [code] = (await once(child, 'close')) as [number | null];
    assert.equal(stderr, '');
    assert.equal(code, 0);
  });

  it('exits 1 with the one error line for a bad policy file, a bad rule file and a bad configuration', () => {
    const broken = config('broken.json', { policies: [resolve('test/fixtures/reload/broken.ttl')] });
    const policy = run(['check', '--config', broken]);
    assert.equal(policy.status, 1);
    assert.equal(policy.stdout, '');
    assert.match(policy.stderr, /^sparql-guard: \/.*broken\.ttl: Turtle syntax error[^\n]*\n$/);

    const badRule = config('bad-rule.json', { policies: [POLICIES], rules: [resolve('test/fixtures/policy/rules/broken-syntax.n3')] });
    const rule = run(['check', '--config', badRule]);
    assert.equal(rule.status, 1);
    assert.match(rule.stderr, /^sparql-guard: \/.*broken-syntax\.n3: rule file fails in EYE[^\n]*\n$/);

    const unknownKey = config('unknown-key.json', { policies: [POLICIES], polices: [] });
    const key = run(['check', '--config', unknownKey]);
    assert.equal(key.status, 1);
    assert.match(key.stderr, /^sparql-guard: [^\n]*polices[^\n]*\n$/);
  });

  it("loads the embedded store's data as serve does: a data file serve cannot load fails check, but with --offline", () => {
    const bad = join(folder, 'bad.trig');
    writeFileSync(bad, 'garbage {{{\n');
    for (const [name, file, cause] of [
      ['missing-data.json', join(folder, 'missing.trig'), 'no such file'],
      ['bad-data.json', bad, 'Parser error at line 1'],
    ] as const) {
      const broken = config(name, { policies: [POLICIES], embedded: { data: [file] } });
      for (const args of [['check'], ['check', '--json'], ['check', '--why', 'anonymous']]) {
        const result = run([...args, '--config', broken]);
        assert.equal(result.status, 1, `${args.join(' ')}: ${result.stdout}`);
        assert.equal(result.stdout, '');
        assert.ok(result.stderr.startsWith(`sparql-guard check: embedded store: cannot load ${file}: ${cause}`), result.stderr);
        assert.match(result.stderr, /\(serve would not start either: fix embedded\.data; --offline skips this check\)\n$/);
        assert.equal(result.stderr.split('\n').length, 2, result.stderr);
      }
      assert.equal(run(['check', '--offline', '--config', broken]).status, 0);
    }
    const good = config('good-data.json', { policies: [POLICIES], embedded: { data: [resolve('policies/demo.trig')] } });
    assert.equal(run(['check', '--config', good]).status, 0);
  });

  it('exits 1 with one line naming the file and the line for a configuration or policy file that is not UTF-8', () => {
    const latin1Config = join(folder, 'latin1.json');
    writeFileSync(
      latin1Config,
      Buffer.from(`{\n  "policies": [${JSON.stringify(POLICIES)}],\n  "upstreamHeaders": { "X-Site": "Zürich" }\n}`, 'latin1'),
    );
    const configResult = run(['check', '--config', latin1Config]);
    assert.equal(configResult.status, 1);
    assert.equal(
      configResult.stderr,
      `sparql-guard: config file ${latin1Config}: not valid UTF-8 (line 3; save it as UTF-8, e.g. iconv -f latin1 -t utf-8)\n`,
    );

    const latin1Policy = join(folder, 'latin1.ttl');
    writeFileSync(latin1Policy, Buffer.from('@prefix ex: <https://example.org/> .\n# Lesbarkeit für alle\n', 'latin1'));
    const policyResult = run(['check', '--config', config('latin1-policy.json', { policies: [latin1Policy] })]);
    assert.equal(policyResult.status, 1);
    assert.match(policyResult.stderr, /^sparql-guard: \/.*latin1\.ttl: policy file is not valid UTF-8 \(line 2; [^\n]*\n$/);
  });

  it('prints the engine and time of each rule file, and warnings about the operator rules', () => {
    const rules = [
      resolve('rules/examples/group-hierarchy.n3'),
      resolve('policies/examples/group-hierarchy.n3'),
      resolve('test/fixtures/policy/rules/warnings.n3'),
      resolve('test/fixtures/policy/rules/eye-only.n3'),
    ];
    const result = run(['check', '--config', config('engines.json', { policies: [POLICIES], rules })]);
    assert.equal(result.status, 0, result.stderr);
    const [hierarchy, , warnings, eyeOnly] = rules;
    assert.match(result.stdout, new RegExp(`^rules: forward chainer ran ${hierarchy}$`, 'm'));
    assert.match(result.stdout, new RegExp(`^rules: forward chainer ran ${warnings}$`, 'm'));
    assert.match(result.stdout, /^rules: forward chainer took \d+ ms over \d+ triples for 4 file\(s\)$/m);
    assert.match(
      result.stdout,
      new RegExp(`^rules: EYE ran ${eyeOnly} \\(the built-in <http://www\\.w3\\.org/2000/10/swap/log#rawType>\\)$`, 'm'),
    );
    assert.match(result.stdout, /^rules: EYE took \d+ ms over \d+ triples for 1 file\(s\)$/m);
    assert.match(
      result.stdout,
      /^warning: .*warnings\.n3: rule 1 .* cannot fire: no triple, fact or rule has <https:\/\/example\.org\/neverStated>$/m,
    );
    assert.match(result.stdout, /^warning: .*warnings\.n3: rule 2 .* derives <https:\/\/example\.org\/tag>, which no rule reads/m);
    assert.match(result.stdout, /^warning: .*warnings\.n3: rule 3 .* costs the square of the policies/m);
    assert.doesNotMatch(result.stdout, /^warning: .*(group-hierarchy|eye-only)\.n3/m, 'sound rules earn no warning');
    // What EYE derived is in the listing: its file did run.
    assert.match(
      result.stdout,
      /^group "beta"\n {2}policies: [^\n]*\n {2}graphs: +<http:\/\/example\.org\/graphs\/b> <http:\/\/example\.org\/graphs\/eye-derived>$/m,
    );
    const json = JSON.parse(run(['check', '--json', '--config', config('engines.json', { policies: [POLICIES], rules })]).stdout) as {
      engines: { engine: string }[];
      warnings: string[];
    };
    assert.deepEqual(
      json.engines.map((entry) => entry.engine),
      ['forward chainer', 'EYE'],
    );
    assert.equal(json.warnings.length, 3);
  });

  it('names what the operator set for a configuration file it cannot read: --config, or GUARD_CONFIG', () => {
    // The line said "set GUARD_CONFIG to ..." to an operator who had given --config.
    const missing = join(folder, 'no-such-config.json');
    for (const args of [
      ['check', '--config', missing],
      ['explain', '--config', missing, '--query', 'ASK {}'],
    ]) {
      const result = run(args);
      assert.equal(result.status, 1);
      assert.equal(result.stderr, `sparql-guard: config file ${missing}: not found (give --config the path of a readable JSON file)\n`);
    }
    assert.equal(
      run(['check', '--config', folder]).stderr,
      `sparql-guard: config file ${folder}: is a folder (give --config the path of a readable JSON file)\n`,
    );
    assert.equal(
      run(['check', '--config', '']).stderr,
      'sparql-guard: option --config: empty (give the path of the JSON configuration file)\n',
    );
    const byEnv = run(['check'], { env: { GUARD_CONFIG: missing } });
    assert.equal(byEnv.status, 1);
    assert.equal(byEnv.stderr, `sparql-guard: config file ${missing}: not found (set GUARD_CONFIG to the path of a readable JSON file)\n`);
  });

  it('applies the same fail-closed rule as serve: GUARD_UPSTREAM without GUARD_CONFIG is an error', () => {
    const result = run(['check'], { env: { GUARD_UPSTREAM: 'http://127.0.0.1:1/sparql' } });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /GUARD_CONFIG is not set/);
  });
});

describe('sparql-guard explain', () => {
  const QUERY = 'SELECT * WHERE { ?s ?p ?o }';

  it('answers the explain JSON for an API key, offline, whatever the config says about explain', () => {
    const result = run(['explain', '--config', configFile, '--key', KEY, '--query', QUERY]);
    assert.equal(result.status, 0, result.stderr);
    const json = JSON.parse(result.stdout) as Record<string, unknown>;
    assert.deepEqual(Object.keys(json), ['agent', 'groups', 'policies', 'query', 'form']);
    assert.equal(json.agent, 'http://example.org/agents/beta-user');
    assert.deepEqual(json.groups, ['beta']);
    assert.deepEqual(json.policies, ['<http://example.org/policies/everyone>', '<http://example.org/policies/beta>']);
    assert.equal(json.form, 'select');
    assert.match(String(json.query), /FROM <http:\/\/example\.org\/graphs\/a>\nFROM <http:\/\/example\.org\/graphs\/b>\nFROM NAMED/);
  });

  it('takes the caller from --agent and --group, the query from a file or stdin, and the protocol dataset', () => {
    const queryFile = join(folder, 'q.rq');
    writeFileSync(queryFile, 'ASK { ?s ?p ?o }');
    const fromFile = run(['explain', '--config', configFile, '--agent', 'http://example.org/agents/keeper', '--query-file', queryFile]);
    assert.equal(fromFile.status, 0, fromFile.stderr);
    const keeper = JSON.parse(fromFile.stdout) as Record<string, unknown>;
    assert.equal(keeper.form, 'ask');
    assert.deepEqual(keeper.policies, ['<http://example.org/policies/everyone>', '<http://example.org/policies/keeper>']);

    const fromStdin = run(
      [
        'explain',
        '--config',
        configFile,
        '--agent',
        'http://example.org/agents/x',
        '--group',
        'beta',
        '--default-graph-uri',
        'http://example.org/graphs/b',
      ],
      { input: QUERY },
    );
    assert.equal(fromStdin.status, 0, fromStdin.stderr);
    const query = String((JSON.parse(fromStdin.stdout) as Record<string, unknown>).query);
    assert.match(query, /FROM <http:\/\/example\.org\/graphs\/b>/);
    assert.doesNotMatch(query, /FROM <http:\/\/example\.org\/graphs\/a>/);
  });

  it('refuses a query file or stdin that is not UTF-8 (exit 2): read with U+FFFD, "café" would be another query', () => {
    const latin1 = Buffer.from('SELECT * { ?s ?p "café" }', 'latin1');
    const queryFile = join(folder, 'latin1.rq');
    writeFileSync(queryFile, latin1);
    const fromFile = run(['explain', '--config', configFile, '--query-file', queryFile]);
    assert.equal(fromFile.status, 2);
    assert.match(fromFile.stderr, /^sparql-guard explain: --query-file is not valid UTF-8 \(line 1; [^\n]*\n/);
    const fromStdin = run(['explain', '--config', configFile], { input: latin1 });
    assert.equal(fromStdin.status, 2);
    assert.match(fromStdin.stderr, /^sparql-guard explain: the query on stdin is not valid UTF-8 \(line 1; /);
    const missing = run(['explain', '--config', configFile, '--query-file', join(folder, 'missing.rq')]);
    assert.match(missing.stderr, /^sparql-guard explain: --query-file cannot be read \(ENOENT\)\n/);
  });

  it('anonymous by default', () => {
    const result = run(['explain', '--config', configFile, '--query', QUERY]);
    assert.equal(result.status, 0, result.stderr);
    const json = JSON.parse(result.stdout) as Record<string, unknown>;
    assert.equal(json.agent, 'https://w3id.org/sparql-guard#Anonymous');
    assert.deepEqual(json.policies, ['<http://example.org/policies/everyone>']);
  });

  it("exits 1 with the server's status and one-line refusal", () => {
    const cases: [string[], RegExp][] = [
      [['--key', 'not-a-known-key', '--query', QUERY], /^sparql-guard explain: 401: unknown API key\n$/],
      [['--query', 'SELECT * { SERVICE <http://x.example/> { ?s ?p ?o } }'], /^sparql-guard explain: 403: /],
      [['--query', 'INSERT DATA { <a:b> <a:b> <a:b> }'], /^sparql-guard explain: 403: /],
      [['--query', 'SELECT * {'], /^sparql-guard explain: 400: /],
    ];
    for (const [args, pattern] of cases) {
      const result = run(['explain', '--config', configFile, ...args]);
      assert.equal(result.status, 1, args.join(' '));
      assert.equal(result.stdout, '');
      assert.match(result.stderr, pattern);
    }
  });

  it('exits 2 on wrong arguments', () => {
    for (const args of [['--group', 'beta', '--query', QUERY], ['--agent', 'nope', '--query', QUERY], ['--bogus'], []]) {
      const result = run(['explain', '--config', configFile, ...args]);
      assert.equal(result.status, 2, args.join(' '));
      assert.match(result.stderr, /^sparql-guard explain: /);
    }
  });
});
