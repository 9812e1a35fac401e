// The Dockerfile's runtime stage, run as a script on a fresh copy (no container engine here): its install, its CMD, its HEALTHCHECK.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { INTEGRATION_API_KEYS, INTEGRATION_DATA, INTEGRATION_POLICIES, KEYS } from '../helpers/start-test-guard.js';

const ROOT = resolve('.');

/** One instruction of a Dockerfile: its keyword and the rest of its (joined) lines. */
interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

/** The instructions of each stage, in order; line continuations joined, comments dropped. */
function readStages(text: string): Instruction[][] {
  const stages: Instruction[][] = [];
  const logical = text.replace(/\\\n/g, ' ').split('\n');
  for (const line of logical) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const match = /^(\S+)\s+(.*)$/.exec(trimmed);
    assert.ok(match, `a Dockerfile line without arguments: ${trimmed}`);
    const keyword = match[1]!.toUpperCase();
    if (keyword === 'FROM') stages.push([]);
    stages.at(-1)!.push({ keyword, args: match[2]! });
  }
  return stages;
}

/** `KEY=value KEY2=value2` of an ENV line (no quoting in ours). */
function readEnv(args: string): Record<string, string> {
  return Object.fromEntries(args.split(/\s+/).map((pair) => pair.split('=', 2) as [string, string]));
}

/** The patterns of .dockerignore: true when `path` (relative to the context) is sent to the build. */
function dockerignoreAllows(path: string): boolean {
  let allowed = true;
  for (const raw of readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    const pattern = (negated ? line.slice(1) : line).replace(/\/$/, '');
    if (pattern === '*' || pattern === path || path.startsWith(`${pattern}/`)) allowed = negated;
  }
  return allowed;
}

describe('the Dockerfile', () => {
  const stages = readStages(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  const runtime = stages.at(-1)!;

  it('has a build stage and a runtime stage that runs node as a non-root user, with a HEALTHCHECK on /healthz', () => {
    assert.equal(stages.length, 2);
    assert.match(stages[0]![0]!.args, / AS build$/);
    assert.ok(
      stages[0]!.some((step) => step.keyword === 'RUN' && /\bnpm ci\b/.test(step.args) && !/--omit=dev/.test(step.args)),
      'builds with dev dependencies',
    );
    const user = runtime.find((step) => step.keyword === 'USER');
    assert.ok(user !== undefined && !/^(root|0)(:|$)/.test(user.args), 'runs as a non-root user');
    const cmd = JSON.parse(runtime.find((step) => step.keyword === 'CMD')!.args) as string[];
    assert.equal(cmd[0], 'node', 'CMD is node itself (exec form), so signals reach the guard');
    assert.match(runtime.find((step) => step.keyword === 'HEALTHCHECK')!.args, /\/healthz/);
  });

  it(
    'runtime stage on a fresh copy: production dependencies and the built output only; CMD serves; HEALTHCHECK passes; SIGTERM exits 0',
    { timeout: 240_000 },
    async () => {
      const scratch = mkdtempSync(join(tmpdir(), 'sparql-guard-image-'));
      try {
        let workdir = scratch;
        const env: Record<string, string> = {};
        const inImage = (path: string) => join(scratch, path);
        for (const step of runtime.slice(1)) {
          if (step.keyword === 'WORKDIR') {
            workdir = inImage(step.args);
            mkdirSync(workdir, { recursive: true });
          } else if (step.keyword === 'ENV') {
            Object.assign(env, readEnv(step.args));
          } else if (step.keyword === 'COPY') {
            const words = step.args.split(/\s+/);
            const from = words.find((word) => word.startsWith('--from='));
            const paths = words.filter((word) => !word.startsWith('--'));
            const destination = paths.pop()!;
            const target = resolve(workdir, destination);
            for (const source of paths) {
              // The build stage's /app/dist/src is what `npm run build` made here (the same tsc, the same sources).
              const origin = from === undefined ? join(ROOT, source) : join(ROOT, source.replace(/^\/app\//, ''));
              if (from === undefined) assert.ok(dockerignoreAllows(source), `.dockerignore keeps ${source} out of the build context`);
              // Docker: a destination ending in / is a folder the sources go into; otherwise the source's content lands there.
              cpSync(origin, destination.endsWith('/') ? join(target, source.split('/').pop()!) : target, { recursive: true });
            }
          } else if (step.keyword === 'RUN') {
            // BuildKit's cache mount is a build detail; npm's own cache on this machine plays its part.
            const command = step.args.replace(/--mount=\S+\s*/g, '');
            execFileSync('bash', ['-c', command], {
              cwd: workdir,
              env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? scratch, ...env, npm_config_prefer_offline: 'true' },
              stdio: ['ignore', 'ignore', 'pipe'],
            });
          }
        }
        const app = workdir;
        assert.ok(existsSync(join(app, 'node_modules/fastify')), 'production dependencies installed');
        assert.ok(existsSync(join(app, 'node_modules/prom-client')));
        assert.equal(existsSync(join(app, 'node_modules/typescript')), false, 'no dev dependency');
        assert.equal(existsSync(join(app, 'node_modules/yaml')), false, 'no dev dependency');
        assert.equal(existsSync(join(app, 'src')), false, 'no TypeScript sources');
        assert.equal(existsSync(join(app, 'dist/test')), false, 'no compiled tests');

        // The mounted folder: config and policies, as an operator would mount at GUARD_CONFIG's folder.
        const mount = join(scratch, 'etc/sparql-guard');
        mkdirSync(mount, { recursive: true });
        cpSync(INTEGRATION_POLICIES, join(mount, 'policies.ttl'));
        writeFileSync(
          join(mount, 'guard.json'),
          JSON.stringify({
            policies: ['policies.ttl'],
            auth: { apiKeys: INTEGRATION_API_KEYS },
            host: '127.0.0.1',
            embedded: { data: [INTEGRATION_DATA] },
          }),
        );
        const cmd = JSON.parse(runtime.find((step) => step.keyword === 'CMD')!.args) as string[];
        const runEnv = { PATH: process.env.PATH ?? '', ...env, GUARD_CONFIG: join(mount, 'guard.json'), PORT: '0' };
        assert.equal(env.GUARD_CONFIG, '/etc/sparql-guard/guard.json');
        const child = spawn(cmd[0] === 'node' ? process.execPath : cmd[0]!, cmd.slice(1), {
          cwd: app,
          env: runEnv,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        let errors = '';
        child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
        child.stderr.setEncoding('utf8').on('data', (text: string) => (errors += text));
        const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
        try {
          const deadline = Date.now() + 60_000;
          let url: string | undefined;
          while (url === undefined) {
            url = output
              .split('\n')
              .map((line) => (line.includes('"event":"listening"') ? (JSON.parse(line) as { url: string }).url : undefined))
              .find(Boolean);
            if (child.exitCode !== null || Date.now() > deadline) assert.fail(`the image's CMD did not start: ${errors}`);
            await new Promise((done) => setTimeout(done, 100));
          }
          const response = await fetch(`${url}/sparql?query=${encodeURIComponent('SELECT * WHERE { ?s ?p ?o } LIMIT 1')}`, {
            headers: { 'x-api-key': KEYS.beta },
          });
          assert.equal(response.status, 200);
          assert.equal(((await response.json()) as { results: { bindings: unknown[] } }).results.bindings.length, 1);
          // The query page: its own files from ui/, YASGUI from the production dependencies.
          const page = await fetch(`${url}/sparql`, { headers: { accept: 'text/html' } });
          assert.equal(page.status, 200);
          assert.match(await page.text(), /<html/i);
          assert.equal((await fetch(`${url}/sparql/ui/yasgui.min.js`)).status, 200);

          // The HEALTHCHECK's own command, with the port the CMD took.
          const health = JSON.parse(/CMD (\[.*\])$/.exec(runtime.find((step) => step.keyword === 'HEALTHCHECK')!.args)![1]!) as string[];
          execFileSync(health[0] === 'node' ? process.execPath : health[0]!, health.slice(1), {
            env: { ...runEnv, PORT: new URL(url).port },
            timeout: 10_000,
          });
        } finally {
          child.kill('SIGTERM');
        }
        assert.equal(await exited, 0, errors);
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    },
  );
});
