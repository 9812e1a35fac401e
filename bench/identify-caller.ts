// Benchmark (e): the cost of identifying the caller per request: API key, JWT from the verification cache, JWT verified every time (RS256, ES256, EdDSA).

import { performance } from 'node:perf_hooks';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { hashApiKey } from '../src/auth/hash-api-key.js';
import { createCallerIdentifier } from '../src/auth/identify-caller.js';
import { parseConfig } from '../src/config/read-config.js';
import { describeLoad, describeMachine } from './_util/describe-machine.js';
import { runScenario, scenarioArguments } from './_util/fresh-process.js';
import { percentile } from './_util/percentile.js';

const ISSUER = 'https://idp.example.org/realms/bench';
const AGENT_PREFIX = 'https://idp.example.org/users/';
const API_KEY = 'sg_bench-key-0123456789abcdefghijklmnopqrstuvwxyz';
/** Per scenario: at most this many samples, and at most this long. */
const MAX_SAMPLES = 20_000;
const MAX_MS = 3000;
const WARM_UP = 200;

interface Result {
  readonly scenario: string;
  readonly samples: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly perSecond: number;
}

const SCENARIOS = ['api-key', 'jwt-RS256-cached', 'jwt-RS256-uncached', 'jwt-ES256-cached', 'jwt-ES256-uncached', 'jwt-EdDSA-uncached'];

/** One scenario in this process: build the identifier, check its answer, then time it. */
async function runOne(scenario: string): Promise<Result> {
  const [, alg = 'RS256', mode = 'cached'] = scenario === 'api-key' ? [] : scenario.split('-');
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg };
  const config = parseConfig(
    {
      auth: {
        apiKeys: [{ agent: `${AGENT_PREFIX}key-user`, sha256: hashApiKey(API_KEY) }],
        jwt: {
          issuer: ISSUER,
          audience: 'sparql',
          jwks: { keys: [jwk] },
          agentPrefix: AGENT_PREFIX,
          groupsClaim: 'realm_access.roles',
          cacheMaxEntries: mode === 'uncached' ? 0 : 10_000,
        },
      },
    },
    { configFile: undefined, env: {} },
  );
  const identify = createCallerIdentifier(config.auth);
  // A Keycloak-sized access token: a handful of roles and the usual claims.
  const token = await new SignJWT({
    sub: 'ann',
    realm_access: { roles: ['staff', 'hr', 'offline_access', 'uma_authorization'] },
    azp: 'notebook',
    scope: 'openid profile email',
    preferred_username: 'ann',
    email: 'ann@example.org',
    sid: 'f3b1c0de-5d2a-4c7e-9a41-1b2c3d4e5f60',
  })
    .setProtectedHeader({ alg, kid: 'bench', typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience('sparql')
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(privateKey);
  const headers = scenario === 'api-key' ? { authorization: `Bearer ${API_KEY}` } : { authorization: `Bearer ${token}` };
  const expected = scenario === 'api-key' ? `${AGENT_PREFIX}key-user` : `${AGENT_PREFIX}ann`;
  const first = await identify(headers);
  if (first.agent !== expected) throw new Error(`${scenario}: identified ${first.agent}, expected ${expected}`);

  for (let i = 0; i < WARM_UP; i += 1) await identify(headers);
  const times: number[] = [];
  const started = performance.now();
  while (times.length < MAX_SAMPLES && performance.now() - started < MAX_MS) {
    const t0 = performance.now();
    await identify(headers);
    times.push((performance.now() - t0) * 1000);
  }
  times.sort((a, b) => a - b);
  const p50Us = percentile(times, 50);
  return { scenario, samples: times.length, p50Us, p99Us: percentile(times, 99), perSecond: 1e6 / p50Us };
}

async function main(): Promise<void> {
  const args = scenarioArguments();
  if (args !== undefined) {
    process.stdout.write(JSON.stringify(await runOne(args[0] ?? 'api-key')));
    return;
  }
  const results = SCENARIOS.map((scenario) => runScenario<Result>(import.meta.url, scenario));
  const round = (us: number) => (us >= 100 ? us.toFixed(0) : us.toFixed(1));
  const lines = [
    '### (e) Identifying the caller: API key vs JWT, cached and verified each time',
    '',
    `machine: ${describeMachine()}`,
    `load: ${describeLoad()}`,
    'one identifyCaller call per sample (headers -> Caller), inline JWKS (no network), each scenario in a fresh process, after warm-up; a Keycloak-sized token (~700 bytes)',
    '',
    '| scenario | p50 us | p99 us | calls/s at p50 | samples |',
    '|---|---:|---:|---:|---:|',
    ...results.map((r) => `| ${r.scenario} | ${round(r.p50Us)} | ${round(r.p99Us)} | ${Math.round(r.perSecond)} | ${r.samples} |`),
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
