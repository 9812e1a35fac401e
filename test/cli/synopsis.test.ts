// The real bin's synopses: every form a usage line or docs/command-line.md shows runs, none suggests an argument the parser refuses; and --version.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { CHECK_USAGE } from '../../src/cli/check-command.js';
import { EXPLAIN_USAGE } from '../../src/cli/explain-command.js';
import { HASH_KEY_USAGE } from '../../src/cli/hash-key-command.js';
import { plain, readDoc, sectionOf, tableOf } from '../helpers/markdown-table.js';

const BIN = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
const DEMO = resolve('policies/demo.json');

/** Runs the bin with stdin from /dev/null; GUARD_* variables of the test run are cleared. */
function run(args: string[]) {
  const { GUARD_CONFIG: _c, GUARD_UPSTREAM: _u, ...env } = process.env;
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The synopsis of a usage text: its lines up to the first line of prose, `usage: ` dropped. */
function synopsisOf(usage: string): string {
  const lines = usage.split('\n');
  const end = lines.findIndex((line, i) => i > 0 && !/^\s+\[/.test(line));
  return (end === -1 ? lines : lines.slice(0, end))
    .join(' ')
    .replace(/^usage: /, '')
    .replace(/\s+/g, ' ');
}

const synopses = [
  ...[CHECK_USAGE, EXPLAIN_USAGE, HASH_KEY_USAGE].map(synopsisOf),
  ...tableOf(sectionOf(readDoc('docs/command-line.md'), '## Commands')).map((row) => plain(row.command).replaceAll('\\|', '|')),
];

describe('synopses', () => {
  it('show options only: no bracketed word such as [caller] that reads as a positional argument', () => {
    assert.ok(synopses.length >= 8, `${synopses.length} synopses`);
    for (const synopsis of synopses) {
      // `[serve]` is the one positional, the command itself.
      const positional = [...synopsis.matchAll(/\[([a-z][a-z-]*)\]/g)].map((match) => match[1]).filter((word) => word !== 'serve');
      assert.deepEqual(positional, [], synopsis);
    }
  });

  it('docs/command-line.md shows explain exactly as its usage does', () => {
    const documented = synopses.find((synopsis) => synopsis.startsWith('sparql-guard explain') && synopsis !== synopsisOf(EXPLAIN_USAGE));
    assert.equal(documented, synopsisOf(EXPLAIN_USAGE).replace(/ \[--default-graph-uri IRI\]\.\.\. \[--named-graph-uri IRI\]\.\.\.$/, ''));
  });

  describe('every form of the explain synopsis runs on the demo', () => {
    const folder = mkdtempSync(join(tmpdir(), 'synopsis-'));
    const queryFile = join(folder, 'query.rq');
    writeFileSync(queryFile, 'SELECT * WHERE { ?s ?p ?o }');
    after(() => rmSync(folder, { recursive: true, force: true }));
    // Each caller form once, each query form twice: every alternative of the synopsis runs.
    const forms: [string, string[]][] = [
      ['--key KEY --query TEXT', ['--key', 'sg_demo_alice_hr_7c1e5a93f04b2d68', '--query', 'SELECT * WHERE { ?s ?p ?o }']],
      [
        "--header 'Name: value' --query-file FILE",
        ['--header', 'X-API-Key: sg_demo_bob_research_2a94d0e6b8f5c317', '--query-file', queryFile],
      ],
      [
        '--agent IRI --group NAME --query TEXT',
        ['--agent', 'https://example.org/agents/ann', '--group', 'hr', '--query', 'ASK { ?s ?p ?o }'],
      ],
      ['no caller (anonymous), --query-file FILE', ['--query-file', queryFile]],
    ];
    for (const [name, args] of forms) {
      it(name, () => {
        const result = run(['explain', '--config', DEMO, ...args, '--default-graph-uri', 'https://example.org/graphs/public']);
        assert.equal(result.status, 0, result.stderr);
        assert.match(result.stdout, /"query": "BASE <http:\/\/localhost\/>/);
      });
    }
    it('a positional argument is refused with the usage (exit 2)', () => {
      const result = run(['explain', '--config', DEMO, 'anonymous', 'SELECT * WHERE { ?s ?p ?o }']);
      assert.equal(result.status, 2);
      assert.match(result.stderr, /usage: sparql-guard explain/);
    });
  });
});

describe('--version', () => {
  const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
  for (const flag of ['--version', '-V']) {
    it(`${flag} prints the package version and exits 0`, () => {
      const result = run([flag]);
      assert.equal(result.status, 0, result.stderr);
      assert.equal(result.stdout, `${version}\n`);
    });
  }
  it('is named in --help, and refuses an argument after it', () => {
    assert.match(run(['--help']).stdout, /sparql-guard --version \| -V/);
    assert.equal(run(['--version', 'extra']).status, 2);
  });
});
