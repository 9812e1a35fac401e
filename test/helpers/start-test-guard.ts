// Starts a real guard for a test: a config file in a temporary folder, real policies, real embedded Oxigraph.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import { after, before } from 'node:test';
import { readConfig } from '../../src/config/read-config.js';
import { startGuard, type RunningGuard } from '../../src/server/start-guard.js';

export const INTEGRATION_DATA = resolve('test/fixtures/integration/data.trig');
export const INTEGRATION_POLICIES = resolve('test/fixtures/integration/policies.ttl');

/** API keys of the integration fixtures, by name. */
export const KEYS = {
  beta: 'test-key-beta-0123456789abcdef',
  keeper: 'test-key-keeper-0123456789abcdef',
  lonely: 'test-key-lonely-0123456789abcdef',
} as const;

export const sha256 = (key: string): string => createHash('sha256').update(key).digest('hex');

export const INTEGRATION_API_KEYS = [
  { agent: 'http://example.org/agents/beta-user', groups: ['beta'], sha256: sha256(KEYS.beta) },
  { agent: 'http://example.org/agents/keeper', groups: [], sha256: sha256(KEYS.keeper) },
  { agent: 'http://example.org/agents/lonely', groups: [], sha256: sha256(KEYS.lonely) },
];

export interface TestGuard {
  readonly guard: RunningGuard;
  /** The query endpoint URL (`{url}/sparql`). */
  readonly endpoint: string;
  readonly logs: Record<string, unknown>[];
  readonly configFile: string;
  close(): Promise<void>;
}

/**
 * Writes `config` (merged over integration defaults: port 0 on loopback, the
 * integration policies, keys and data) to a temporary file and starts the guard
 * from it exactly as the CLI would. Log lines are collected instead of printed.
 */
export async function startTestGuard(config: Record<string, unknown> = {}): Promise<TestGuard> {
  const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-test-'));
  const configFile = join(folder, 'guard.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      port: 0,
      host: '127.0.0.1',
      policies: [INTEGRATION_POLICIES],
      auth: { apiKeys: INTEGRATION_API_KEYS },
      embedded: { data: [INTEGRATION_DATA] },
      // No load balancer to wait for: close() goes straight to the grace.
      shutdown: { drainMs: 0 },
      ...config,
    }),
  );
  const logs: Record<string, unknown>[] = [];
  const guard = await startGuard(readConfig({ GUARD_CONFIG: configFile }), (entry) => logs.push({ ...entry }));
  const path = typeof config.path === 'string' ? config.path : '/sparql';
  return {
    guard,
    endpoint: `${guard.url}${path}`,
    logs,
    configFile,
    async close() {
      await guard.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/**
 * Starts a test guard (startTestGuard with `config`) before the tests of the enclosing suite, or
 * of the file at its top level, and closes it after them. Returns the guard, read inside a test.
 */
export function useTestGuard(config: Record<string, unknown> = {}): () => TestGuard {
  let t: TestGuard | undefined;
  before(async () => {
    t = await startTestGuard(config);
  });
  after(async () => {
    await t?.close();
  });
  return () => {
    if (t === undefined) throw new Error('the test guard starts before the tests: read it inside a test');
    return t;
  };
}

/** Runs a SELECT through the guard as `key` (or anonymously) and returns the JSON results. */
export async function select(
  endpoint: string,
  query: string,
  options: { key?: string; params?: Record<string, string[]> } = {},
): Promise<{ status: number; rows: Record<string, string>[]; body: string }> {
  const body = new URLSearchParams({ query });
  for (const [name, values] of Object.entries(options.params ?? {})) for (const value of values) body.append(name, value);
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/sparql-results+json',
      ...(options.key ? { authorization: `Bearer ${options.key}` } : {}),
    },
    body,
  });
  const text = await response.text();
  if (response.status !== 200) return { status: response.status, rows: [], body: text };
  const json = JSON.parse(text) as { results?: { bindings: Record<string, { value: string }>[] }; boolean?: boolean };
  const rows = (json.results?.bindings ?? []).map((binding) =>
    Object.fromEntries(Object.entries(binding).map(([name, term]) => [name, term.value])),
  );
  return { status: 200, rows, body: text };
}
