// The Node lines the guard is tested on: .ci/run's list, package.json's engines, the Dockerfile's runtime, and the node running the tests.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = resolve('.');

/** A version as three numbers: major, minor, patch. */
type Version = readonly [number, number, number];

/** One alternative of `engines.node`: a caret range (`^20.18.1`, `^22`), i.e. one major line from a floor. */
interface EngineLine {
  readonly major: number;
  readonly floor: Version;
}

/** `^20.18.1 || ^22 || ^24`: one caret range per tested line, nothing else (no open upper end). */
function readEngines(range: string): EngineLine[] {
  return range.split('||').map((part) => {
    const match = /^\^(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(part.trim());
    assert.ok(match, `engines.node is caret ranges joined by ||, one per tested line, not ${JSON.stringify(part.trim())}`);
    const floor = [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)] as const;
    return { major: floor[0], floor };
  });
}

/** `NODE_LINES=(24 22 20)` and `FULL_LINE=24` of .ci/run. */
function readCiLines(): { lines: number[]; full: number } {
  const script = readFileSync(join(ROOT, '.ci/run'), 'utf8');
  const lines = /^NODE_LINES=\(([\d ]+)\)$/m.exec(script);
  const full = /^FULL_LINE=(\d+)$/m.exec(script);
  assert.ok(lines && full, '.ci/run sets NODE_LINES=(...) and FULL_LINE=...');
  return { lines: lines[1]!.trim().split(/\s+/).map(Number), full: Number(full[1]) };
}

function atLeast(version: Version, floor: Version): boolean {
  for (let i = 0; i < 3; i += 1) if (version[i] !== floor[i]) return version[i]! > floor[i]!;
  return true;
}

const engines = readEngines((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node);
const ci = readCiLines();

describe('the Node lines', () => {
  it('engines names exactly the lines .ci/run tests, and the image runs the line CI tests in full', () => {
    assert.deepEqual(
      engines.map((line) => line.major).sort((a, b) => a - b),
      [...ci.lines].sort((a, b) => a - b),
      'package.json engines.node and .ci/run NODE_LINES name the same lines',
    );
    assert.ok(ci.lines.includes(ci.full), 'FULL_LINE is one of NODE_LINES');
    const froms = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
      .split('\n')
      .filter((line) => /^FROM\s/i.test(line))
      .map((line) => /^FROM\s+node:(\d+)-\S+/i.exec(line)?.[1]);
    assert.ok(froms.length > 0);
    for (const major of froms) assert.equal(Number(major), ci.full, `every stage of the Dockerfile is FROM node:${ci.full}-...`);
  });

  it(`runs on the node .ci/run asked for, within engines: ${process.version} (${process.execPath})`, () => {
    const version = process.versions.node.split('.').map(Number) as unknown as Version;
    // .ci/run names the line it put first on the PATH: npm test's `node` must be that one, not the machine's.
    const asked = process.env.SPARQL_GUARD_NODE_LINE;
    if (asked !== undefined) assert.equal(String(version[0]), asked, `.ci/run asked for Node ${asked}, npm test ran ${process.version}`);
    const line = engines.find((candidate) => candidate.major === version[0]);
    assert.ok(line !== undefined, `${process.version} is on none of the lines engines names`);
    assert.ok(atLeast(version, line.floor), `${process.version} is below engines' floor ${line.floor.join('.')}`);
  });
});
