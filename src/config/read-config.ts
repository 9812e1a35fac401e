// Reads the JSON configuration (DESIGN section 7) into one frozen, fully checked GuardConfig.

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createPublicKey } from 'node:crypto';
import { ASYMMETRIC_ALGORITHMS, type JwtSettings } from '../auth/create-jwt-verifier.js';
import { findAgentIriProblem } from '../auth/find-agent-iri-problem.js';
import { findDeniedNamespace } from '../sparql/check-function-calls.js';
import { ConfigError } from './config-error.js';
import { expandPlaceholders } from './expand-placeholders.js';

export { ConfigError } from './config-error.js';

/** The whole configuration of one guard process; deeply frozen. */
export interface GuardConfig {
  /** Absolute path of the file read, undefined when built from defaults and environment only. */
  readonly configFile: string | undefined;
  /** Absolute http(s) URL of the store's query endpoint; undefined = the embedded default store. */
  readonly upstream: string | undefined;
  /** Headers added to every upstream request, names as the operator spelled them. */
  readonly upstreamHeaders: Readonly<Record<string, string>>;
  /** Absolute paths of the policy files, in listing order. */
  readonly policies: readonly string[];
  /** Absolute paths of operator rule files (the shipped rules are added elsewhere). */
  readonly rules: readonly string[];
  readonly auth: {
    /** `sha256` is lower-case hex; `groups` without duplicates. */
    readonly apiKeys: readonly { readonly agent: string; readonly groups: readonly string[]; readonly sha256: string }[];
    /** Header names lower-cased (node's spelling of request headers); agentPrefix defaults to ''. */
    readonly trustedHeaders:
      | { readonly agent: string; readonly groups: string | undefined; readonly agentPrefix: string }
      | undefined;
    /** JWT bearer tokens; undefined = not accepted (a JWT-shaped bearer value is then an API key). */
    readonly jwt: JwtSettings | undefined;
  };
  readonly watchPolicies: boolean;
  readonly explain: boolean;
  readonly timeoutMs: number;
  readonly port: number;
  readonly host: string;
  /** Starts with `/`, no trailing `/`, no `?` or `#`. */
  readonly path: string;
  /** Cross-origin access from browsers (docs/design.md, "CORS with credentials"). */
  readonly cors: {
    /** Allowed origins, serialized (`https://app.example.org`); undefined = any origin is echoed. */
    readonly origins: readonly string[] | undefined;
    /** Access-Control-Allow-Credentials for the listed origins; only with an explicit `origins` list. */
    readonly credentials: boolean;
  };
  /** Serve the query page at GET {path} for browsers (text/html, no query string). */
  readonly ui: boolean;
  readonly planCache: { readonly maxEntries: number; readonly maxBytes: number };
  /** Absolute IRI without fragment, against which relative IRIs in queries resolve. */
  readonly baseIri: string;
  readonly maxQueryDepth: number;
  /** Extension function IRIs a query may call: exact IRIs, or namespaces ending in `#` or `/`; [] by default. */
  readonly allowedFunctions: readonly string[];
  readonly workers: number;
  /** Absolute paths of data files for the embedded store; [] = the demo data. */
  readonly embedded: { readonly data: readonly string[] };
  /** Bounds on what a client controls (docs/design.md, "Hostile clients"). */
  readonly http: {
    /** Time to receive a request's whole header section. */
    readonly headersTimeoutMs: number;
    /** Time to receive a whole request, headers and body. */
    readonly requestTimeoutMs: number;
    /** Longest silence of a connection while a request arrives, and of an idle keep-alive connection. */
    readonly idleTimeoutMs: number;
    /** Open client connections past which new ones are refused with 503. */
    readonly maxConnections: number;
  };
  /** The SIGTERM sequence: drain (still serving, /readyz 503), then a bounded grace. */
  readonly shutdown: {
    /** How long the guard keeps serving after SIGTERM, with /readyz at 503, before it stops accepting. */
    readonly drainMs: number;
    /** How long requests in flight may then take before their connections are cut. */
    readonly graceMs: number;
  };
  /** The Prometheus listener (GET /metrics); undefined = no metrics. `host` defaults to `host`. */
  readonly metrics: { readonly port: number; readonly host: string } | undefined;
}

/** Where the configuration came from: the file (for relative paths) and the environment. */
export interface ConfigContext {
  readonly configFile: string | undefined;
  readonly env: NodeJS.ProcessEnv;
}

/** Largest delay a Node timer accepts (2^31 - 1 ms); larger values fire at once. */
const MAX_TIMER_MS = 2_147_483_647;
const MAX_WORKERS = 64;

const TOP_KEYS = [
  'upstream', 'upstreamHeaders', 'policies', 'rules', 'auth', 'watchPolicies', 'explain', 'timeoutMs', 'port',
  'host', 'path', 'cors', 'ui', 'planCache', 'baseIri', 'maxQueryDepth', 'allowedFunctions', 'workers', 'embedded',
  'http', 'shutdown', 'metrics',
] as const;
const AUTH_KEYS = ['apiKeys', 'trustedHeaders', 'jwt'] as const;
const JWT_KEYS = [
  'issuer', 'audience', 'jwksUri', 'jwks', 'publicKey', 'algorithms', 'clockToleranceSeconds', 'agentClaim', 'agentPrefix',
  'groupsClaim', 'jwksRefreshCooldownMs', 'cacheMaxEntries',
] as const;
/** JWK members that only a private or secret key has (RFC 7518 section 6): never in a verifier's key set. */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];
const API_KEY_KEYS = ['agent', 'groups', 'sha256'] as const;
const TRUSTED_HEADERS_KEYS = ['agent', 'groups', 'agentPrefix'] as const;
const PLAN_CACHE_KEYS = ['maxEntries', 'maxBytes'] as const;
const EMBEDDED_KEYS = ['data'] as const;
const CORS_KEYS = ['origins', 'credentials'] as const;
const HTTP_KEYS = ['headersTimeoutMs', 'requestTimeoutMs', 'idleTimeoutMs', 'maxConnections'] as const;
const SHUTDOWN_KEYS = ['drainMs', 'graceMs'] as const;
const METRICS_KEYS = ['port', 'host'] as const;

/** RFC 9110 section 5.1: a field name is a token. */
const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** RFC 9110 section 5.5: a field value is visible Latin-1 characters, spaces and tabs. */
const HTTP_FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Headers the upstream client sets or that frame the message: an operator value would break it. */
const PROXY_OWNED_UPSTREAM_HEADERS = new Set([
  'accept', 'connection', 'content-length', 'content-type', 'expect', 'host', 'keep-alive',
  'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade',
]);
/** Standard request headers that a client always controls; none can carry a trusted identity. */
const STANDARD_REQUEST_HEADERS = new Set([
  'accept', 'accept-encoding', 'accept-language', 'connection', 'content-length', 'content-type', 'cookie',
  'host', 'origin', 'referer', 'te', 'transfer-encoding', 'upgrade', 'user-agent',
]);
/** SPARQL 1.1 Protocol parameters: the guard alone decides them (sections 2.1 and 2.2). */
const PROTOCOL_PARAMETERS = ['query', 'update', 'default-graph-uri', 'named-graph-uri', 'using-graph-uri', 'using-named-graph-uri'];
/** A path of segments of RFC 3986 pchar, minus `%` (no encoded forms) and `:` `*` (route syntax). */
const ENDPOINT_PATH = /^(\/[A-Za-z0-9._~!$&'()+,;=@-]+)+$/;
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
const NOT_IN_IRI = /[\s\u0000-\u001f\u007f-\u009f<>"{}|^`\\]/u;

/**
 * Reads the configuration named by GUARD_CONFIG (resolved against the working folder) and
 * checks it with parseConfig. Without GUARD_CONFIG the defaults apply, with the environment
 * overrides; whether that is acceptable is the caller's decision (it can test `configFile`).
 * Throws ConfigError for a missing or unreadable file, invalid JSON (with line and column,
 * never the text) and every rule of parseConfig.
 */
export function readConfig(env: NodeJS.ProcessEnv): GuardConfig {
  const named = env.GUARD_CONFIG;
  if (named === undefined) return parseConfig({}, { configFile: undefined, env });
  if (named.trim() === '') {
    throw new ConfigError('environment variable GUARD_CONFIG: empty (give the path of the JSON configuration file, or unset it)');
  }
  const configFile = resolve(named);
  let text: string;
  try {
    text = readFileSync(configFile, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const problem =
      code === 'ENOENT' ? 'not found' :
      code === 'EISDIR' ? 'is a folder' :
      code === 'EACCES' || code === 'EPERM' ? 'cannot be read (permission denied)' :
      `cannot be read (${code ?? 'unknown error'})`;
    throw new ConfigError(`config file ${configFile}: ${problem} (set GUARD_CONFIG to the path of a readable JSON file)`);
  }
  return parseConfig(parseJson(text, configFile), { configFile, env });
}

/**
 * Checks a parsed configuration object, expands `${NAME}` placeholders in every string value
 * (`$${` for a literal `${`), applies defaults and the environment overrides GUARD_UPSTREAM,
 * PORT and GUARD_WORKERS, resolves paths against the configuration file's folder (or the
 * working folder without a file) and returns the deeply frozen result. Every problem is a
 * ConfigError of one line naming the key path (or variable) and the fix.
 */
export function parseConfig(json: unknown, context: ConfigContext): GuardConfig {
  const { env } = context;
  const configFile = context.configFile === undefined ? undefined : resolve(context.configFile);
  const baseDir = configFile === undefined ? process.cwd() : dirname(configFile);
  if (typeof json === 'object' && json !== null && !Array.isArray(json) && 'corsOrigins' in json) {
    fail('corsOrigins', 'replaced by cors.origins', 'write "cors": { "origins": [...] } instead');
  }
  const root = readObject(json, '', TOP_KEYS);
  const text = (value: unknown, path: string): string => expandPlaceholders(readString(value, path), env, path);
  const paths = (value: unknown, path: string, what: string): readonly string[] =>
    readPaths(value, path, what, text, baseDir);

  const config: Omit<GuardConfig, 'metrics'> = {
    configFile,
    upstream: override(
      root.upstream === undefined ? undefined : checkUpstream(text(root.upstream, 'upstream'), 'config upstream'),
      readUpstreamOverride(env),
    ),
    upstreamHeaders: readUpstreamHeaders(root.upstreamHeaders, text),
    policies: paths(root.policies, 'policies', 'policy file'),
    rules: paths(root.rules, 'rules', 'N3 rule file'),
    auth: readAuth(root.auth, text),
    watchPolicies: readBoolean(root.watchPolicies, 'watchPolicies', false),
    explain: readBoolean(root.explain, 'explain', false),
    timeoutMs: readInteger(root.timeoutMs, 'timeoutMs', 60_000, 1, MAX_TIMER_MS, 'milliseconds'),
    port: override(readInteger(root.port, 'port', 8080, 0, 65_535, 'a TCP port; 0 picks a free one'), readPortOverride(env)),
    host: readHost(root.host, text),
    path: readEndpointPath(root.path, text),
    cors: readCors(root.cors, text),
    ui: readBoolean(root.ui, 'ui', true),
    planCache: readPlanCache(root.planCache),
    baseIri: readBaseIri(root.baseIri, text),
    maxQueryDepth: readInteger(root.maxQueryDepth, 'maxQueryDepth', 64, 1, 256, 'levels of nesting'),
    allowedFunctions: readAllowedFunctions(root.allowedFunctions, text),
    workers: override(readInteger(root.workers, 'workers', 1, 1, MAX_WORKERS, 'processes'), readWorkersOverride(env)),
    embedded: readEmbedded(root.embedded, paths),
    http: readHttp(root.http),
    shutdown: readShutdown(root.shutdown),
  };
  // After port and host: the metrics listener defaults to the guard's host and must not take its port.
  return deepFreeze({ ...config, metrics: readMetrics(root.metrics, config.port, config.host, text) });
}

/** Parses JSON text; a syntax error reports line and column, never the text around it. */
function parseJson(text: string, configFile: string): unknown {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  try {
    return JSON.parse(body) as unknown;
  } catch (error) {
    const message = error instanceof Error ? error.message : '';
    const where = jsonErrorPlace(message, body);
    // V8 phrases such as "Expected ',' or '}' after property value" name only JSON syntax;
    // others ("Unexpected token 'x', "...") quote the file, which may hold secrets.
    const phrase = /^(Expected [^"]*?|Unexpected end of JSON input)(?= in JSON|$)/.exec(message)?.[1];
    const detail = [phrase, where].filter((part) => part !== undefined).join(' ');
    throw new ConfigError(`config file ${configFile}: invalid JSON${detail === '' ? '' : ` (${detail})`} (fix the syntax; JSON has no comments or trailing commas)`);
  }
}

function jsonErrorPlace(message: string, text: string): string | undefined {
  const lineColumn = /\(line (\d+) column (\d+)\)/.exec(message);
  if (lineColumn) return `at line ${lineColumn[1]} column ${lineColumn[2]}`;
  const position = /at position (\d+)/.exec(message);
  if (!position) return /end of JSON input/.test(message) ? `at line ${text.split('\n').length}` : undefined;
  const before = text.slice(0, Number(position[1])).split('\n');
  return `at line ${before.length} column ${(before.at(-1) ?? '').length + 1}`;
}

// ---- key paths and generic readers --------------------------------------------------------

function keyPath(parent: string, key: string): string {
  const part = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? key : JSON.stringify(key);
  if (parent === '') return part;
  return part.startsWith('"') ? `${parent}[${part}]` : `${parent}.${part}`;
}

function fail(path: string, problem: string, fix: string): never {
  throw new ConfigError(`${path === '' ? 'config' : `config ${path}`}: ${problem} (${fix})`);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Reads a plain object whose keys must all be known; an unknown key gets a suggestion if close. */
function readObject<K extends string>(value: unknown, path: string, known: readonly K[]): Partial<Record<K, unknown>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(path, `expected an object, found ${typeName(value)}`, 'write a JSON object { ... }');
  }
  for (const key of Object.keys(value)) {
    if (!(known as readonly string[]).includes(key)) {
      const suggestion = suggestKey(key, known);
      const fix = suggestion === undefined ? `known keys here: ${known.join(', ')}` : `did you mean ${keyPath(path, suggestion)}?`;
      fail(keyPath(path, key), 'unknown key', fix);
    }
  }
  return value as Partial<Record<K, unknown>>;
}

/**
 * The known key that `key` most likely misspells: the same letters ignoring case, or the
 * closest key within two edits (a third of its length for long keys).
 */
function suggestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = candidate.toLowerCase() === key.toLowerCase() ? 0 : editDistance(candidate, key);
    if (distance <= Math.max(2, Math.floor(candidate.length / 3)) && distance < bestDistance) {
      [best, bestDistance] = [candidate, distance];
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

function readString(value: unknown, path: string): string {
  if (typeof value !== 'string') fail(path, `expected a string, found ${typeName(value)}`, 'write a JSON string "..."');
  return value;
}

function readBoolean(value: unknown, path: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') fail(path, `expected true or false, found ${typeName(value)}`, 'write true or false without quotes');
  return value;
}

function readInteger(value: unknown, path: string, fallback: number, min: number, max: number, unit: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const found = typeof value === 'number' ? 'found a number outside that range or with a fraction' : `found ${typeName(value)}`;
    fail(path, `expected a whole number from ${min} to ${max}, ${found}`, `write an integer in ${unit}, default ${fallback}`);
  }
  return value;
}

function readArray(value: unknown, path: string, fix: string): readonly unknown[] {
  if (!Array.isArray(value)) fail(path, `expected an array, found ${typeName(value)}`, fix);
  return value;
}

type ReadText = (value: unknown, path: string) => string;

/** A list of file paths, each resolved against `baseDir`; a path listed twice is a mistake. */
function readPaths(value: unknown, path: string, what: string, text: ReadText, baseDir: string): readonly string[] {
  if (value === undefined) return [];
  const files: string[] = [];
  readArray(value, path, `write an array of ${what} paths, relative to the configuration file`).forEach((item, index) => {
    const itemPath = `${path}[${index}]`;
    const file = text(item, itemPath);
    if (file.trim() === '') fail(itemPath, 'empty path', `give the path of a ${what}`);
    const absolute = resolve(baseDir, file);
    const earlier = files.indexOf(absolute);
    if (earlier >= 0) fail(itemPath, `same file as ${path}[${earlier}]`, 'list each file once');
    files.push(absolute);
  });
  return files;
}

// ---- upstream --------------------------------------------------------------------------------

/** Checks an upstream URL; `subject` is `config upstream` or the overriding variable. */
function checkUpstream(value: string, subject: string): string {
  const problem = (text: string, fix: string): never => {
    throw new ConfigError(`${subject}: ${text} (${fix})`);
  };
  const example = 'give the store\'s query endpoint, e.g. http://store:7878/query';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return problem('not an absolute URL', example);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') problem('must use http: or https:', example);
  if (url.username !== '' || url.password !== '') {
    problem('must not carry a user or password', 'put the credential in upstreamHeaders.Authorization, fed from an environment variable');
  }
  if (url.hash !== '') problem('must not have a #fragment', 'remove the part from #');
  for (const name of PROTOCOL_PARAMETERS) {
    if (url.searchParams.has(name)) problem(`must not carry the SPARQL protocol parameter ${name}`, 'the guard sets the protocol parameters itself; remove it');
  }
  return url.href;
}

function readUpstreamOverride(env: NodeJS.ProcessEnv): string | undefined {
  const value = env.GUARD_UPSTREAM;
  if (value === undefined) return undefined;
  if (value.trim() === '') {
    throw new ConfigError('environment variable GUARD_UPSTREAM: empty (give an http(s) URL of the store, or unset it)');
  }
  return checkUpstream(value, 'environment variable GUARD_UPSTREAM');
}

function readUpstreamHeaders(value: unknown, text: ReadText): Readonly<Record<string, string>> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail('upstreamHeaders', `expected an object, found ${typeName(value)}`, 'write { "Header-Name": "value", ... }');
  }
  const headers: Record<string, string> = {};
  const seen = new Map<string, string>();
  for (const [name, raw] of Object.entries(value)) {
    const path = keyPath('upstreamHeaders', name);
    if (!HTTP_TOKEN.test(name)) fail(path, 'not a valid HTTP header name', 'use letters, digits and -, e.g. Authorization');
    const lower = name.toLowerCase();
    const earlier = seen.get(lower);
    if (earlier !== undefined) fail(path, `same header as ${keyPath('upstreamHeaders', earlier)} (names ignore case)`, 'keep one of them');
    if (PROXY_OWNED_UPSTREAM_HEADERS.has(lower)) fail(path, 'this header is set by the guard itself', 'remove it');
    const headerValue = text(raw, path);
    if (!HTTP_FIELD_VALUE.test(headerValue)) {
      fail(path, 'value holds a line break, a control character or a character outside Latin-1', 'check the value and any environment variable it uses');
    }
    seen.set(lower, name);
    headers[name] = headerValue;
  }
  return headers;
}

// ---- auth ------------------------------------------------------------------------------------

function readAuth(value: unknown, text: ReadText): GuardConfig['auth'] {
  if (value === undefined) return { apiKeys: [], trustedHeaders: undefined, jwt: undefined };
  const auth = readObject(value, 'auth', AUTH_KEYS);
  return {
    apiKeys: readApiKeys(auth.apiKeys, text),
    trustedHeaders: readTrustedHeaders(auth.trustedHeaders, text),
    jwt: readJwt(auth.jwt, text),
  };
}

function readJwt(value: unknown, text: ReadText): JwtSettings | undefined {
  if (value === undefined) return undefined;
  const jwt = readObject(value, 'auth.jwt', JWT_KEYS);
  if (jwt.issuer === undefined) fail('auth.jwt.issuer', 'missing', 'give the iss value of the tokens, e.g. https://idp.example.org/realms/main');
  const issuer = text(jwt.issuer, 'auth.jwt.issuer');
  if (issuer === '') fail('auth.jwt.issuer', 'empty', 'give the iss value of the tokens, e.g. https://idp.example.org/realms/main');
  if (jwt.audience === undefined) fail('auth.jwt.audience', 'missing', 'give the aud value the issuer puts in tokens for this service, e.g. "sparql"');
  const audienceList = typeof jwt.audience === 'string' ? [jwt.audience] : readArray(jwt.audience, 'auth.jwt.audience', 'write a string or an array of strings');
  const audience = audienceList.map((item, index) => text(item, typeof jwt.audience === 'string' ? 'auth.jwt.audience' : `auth.jwt.audience[${index}]`));
  if (audience.length === 0 || audience.includes('')) fail('auth.jwt.audience', 'empty', 'give the aud value the issuer puts in tokens for this service, e.g. "sparql"');

  const given = (['jwksUri', 'jwks', 'publicKey'] as const).filter((key) => jwt[key] !== undefined);
  if (given.length !== 1) {
    fail('auth.jwt', given.length === 0 ? 'no key source' : `both ${given.join(' and ')}`, 'give exactly one of jwksUri (the issuer\'s JWKS URL), jwks (an inline key set) or publicKey (a PEM public key)');
  }
  let keys: JwtSettings['keys'];
  if (jwt.jwksUri !== undefined) keys = { kind: 'jwksUri', uri: readJwksUri(text(jwt.jwksUri, 'auth.jwt.jwksUri')) };
  else if (jwt.jwks !== undefined) keys = { kind: 'jwks', jwks: readInlineJwks(jwt.jwks) };
  else keys = { kind: 'publicKey', pem: readPublicKeyPem(text(jwt.publicKey, 'auth.jwt.publicKey')) };

  const algorithms = jwt.algorithms === undefined ? ASYMMETRIC_ALGORITHMS : readAlgorithms(jwt.algorithms, text);
  const agentClaim = jwt.agentClaim === undefined ? 'sub' : text(jwt.agentClaim, 'auth.jwt.agentClaim');
  if (agentClaim === '') fail('auth.jwt.agentClaim', 'empty', 'name the claim that gives the agent, e.g. sub or webid');
  const agentPrefix = jwt.agentPrefix === undefined ? '' : text(jwt.agentPrefix, 'auth.jwt.agentPrefix');
  const prefixProblem = agentPrefix === '' ? undefined : findAgentIriProblem(`${agentPrefix}a`);
  if (prefixProblem !== undefined) {
    fail('auth.jwt.agentPrefix', `the prefix and a claim value together ${prefixProblem}`, 'give the start of an absolute IRI, e.g. https://idp.example.org/users/ (or "" when the claim holds whole IRIs)');
  }
  return {
    issuer,
    audience: [...new Set(audience)],
    keys,
    algorithms,
    clockToleranceSeconds: readInteger(jwt.clockToleranceSeconds, 'auth.jwt.clockToleranceSeconds', 30, 0, 300, 'seconds'),
    agentClaim,
    agentPrefix,
    groupsClaim: readGroupsClaim(jwt.groupsClaim, text),
    jwksRefreshCooldownMs: readInteger(jwt.jwksRefreshCooldownMs, 'auth.jwt.jwksRefreshCooldownMs', 30_000, 1000, 86_400_000, 'milliseconds'),
    cacheMaxEntries: readInteger(jwt.cacheMaxEntries, 'auth.jwt.cacheMaxEntries', 10_000, 0, 1_000_000, 'tokens; 0 verifies every request'),
  };
}

function readJwksUri(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    fail('auth.jwt.jwksUri', 'not an absolute http(s) URL', 'give the jwks_uri of the issuer\'s discovery document, e.g. https://idp.example.org/realms/main/protocol/openid-connect/certs');
  }
  if (url.username !== '' || url.password !== '') fail('auth.jwt.jwksUri', 'must not carry a user or password', 'a JWKS is public; remove them');
  return url.href;
}

function readInlineJwks(value: unknown): { keys: readonly Record<string, unknown>[] } {
  const fix = 'write { "keys": [ { "kty": "RSA", "kid": ..., "n": ..., "e": ... } ] } with public keys only';
  const jwks = readObject(value, 'auth.jwt.jwks', ['keys']);
  const keys = readArray(jwks.keys, 'auth.jwt.jwks.keys', fix);
  if (keys.length === 0) fail('auth.jwt.jwks.keys', 'empty', fix);
  keys.forEach((key, index) => {
    const path = `auth.jwt.jwks.keys[${index}]`;
    if (typeof key !== 'object' || key === null || Array.isArray(key)) fail(path, `expected an object, found ${typeName(key)}`, fix);
    const kty = (key as Record<string, unknown>).kty;
    if (kty !== 'RSA' && kty !== 'EC' && kty !== 'OKP') fail(`${path}.kty`, 'expected RSA, EC or OKP (symmetric oct keys are refused)', fix);
    const secret = PRIVATE_JWK_MEMBERS.find((member) => Object.hasOwn(key, member));
    if (secret !== undefined) fail(`${path}.${secret}`, 'a private key member', 'give the public key only; never put a private key in the configuration');
  });
  return { keys: keys as Record<string, unknown>[] };
}

function readPublicKeyPem(value: string): string {
  const fix = 'give a PEM public key (-----BEGIN PUBLIC KEY----- ...), e.g. "${JWT_PUBLIC_KEY}"';
  if (!value.includes('-----BEGIN PUBLIC KEY-----')) fail('auth.jwt.publicKey', 'not a PEM public key', fix);
  try {
    if (createPublicKey(value).type !== 'public') throw new Error('not public');
  } catch {
    fail('auth.jwt.publicKey', 'cannot be read as a public key', fix);
  }
  return value;
}

function readAlgorithms(value: unknown, text: ReadText): readonly string[] {
  const fix = `write some of ${ASYMMETRIC_ALGORITHMS.join(', ')}`;
  const list = readArray(value, 'auth.jwt.algorithms', fix).map((item, index) => {
    const path = `auth.jwt.algorithms[${index}]`;
    const algorithm = text(item, path);
    if (algorithm.toLowerCase() === 'none') fail(path, 'unsigned tokens (none) are never accepted', fix);
    if (/^HS/i.test(algorithm)) fail(path, 'HMAC algorithms are refused (a public key must never serve as a shared secret)', fix);
    if (!ASYMMETRIC_ALGORITHMS.includes(algorithm)) fail(path, 'not a known asymmetric JWS algorithm', fix);
    return algorithm;
  });
  if (list.length === 0) fail('auth.jwt.algorithms', 'empty', fix);
  return [...new Set(list)];
}

/** A dotted path (`realm_access.roles`), or an array of member names when a name holds a dot. */
function readGroupsClaim(value: unknown, text: ReadText): readonly string[] | undefined {
  if (value === undefined) return undefined;
  const fix = 'write a dotted path such as "realm_access.roles", or an array of member names such as ["https://example.org/claims", "groups"]';
  const path = typeof value === 'string'
    ? text(value, 'auth.jwt.groupsClaim').split('.')
    : readArray(value, 'auth.jwt.groupsClaim', fix).map((item, index) => text(item, `auth.jwt.groupsClaim[${index}]`));
  if (path.length === 0 || path.includes('')) fail('auth.jwt.groupsClaim', 'empty member name', fix);
  return path;
}

function readApiKeys(value: unknown, text: ReadText): GuardConfig['auth']['apiKeys'] {
  if (value === undefined) return [];
  const entries = readArray(value, 'auth.apiKeys', 'write an array of { "agent", "groups", "sha256" } entries');
  const firstIndexOfDigest = new Map<string, number>();
  return entries.map((item, index) => {
    const path = `auth.apiKeys[${index}]`;
    const entry = readObject(item, path, API_KEY_KEYS);
    if (entry.agent === undefined) fail(`${path}.agent`, 'missing', 'give the agent IRI this key identifies, e.g. https://example.org/agents/alice');
    const agent = text(entry.agent, `${path}.agent`);
    const agentProblem = findAgentIriProblem(agent);
    if (agentProblem !== undefined) fail(`${path}.agent`, agentProblem, 'give an absolute IRI such as https://example.org/agents/alice');
    if (entry.sha256 === undefined) fail(`${path}.sha256`, 'missing', 'run "sparql-guard hash-key" to make a key and its digest');
    const sha256 = text(entry.sha256, `${path}.sha256`);
    if (!HEX_SHA256.test(sha256)) fail(`${path}.sha256`, 'expected 64 hexadecimal characters', 'run "sparql-guard hash-key" to make one');
    const digest = sha256.toLowerCase();
    const earlier = firstIndexOfDigest.get(digest);
    if (earlier !== undefined) fail(`${path}.sha256`, `same key as auth.apiKeys[${earlier}]`, 'give each entry its own key');
    firstIndexOfDigest.set(digest, index);
    return { agent, groups: readGroups(entry.groups, `${path}.groups`, text), sha256: digest };
  });
}

function readGroups(value: unknown, path: string, text: ReadText): readonly string[] {
  if (value === undefined) return [];
  const groups = readArray(value, path, 'write an array of group names, e.g. ["staff"]').map((item, index) => {
    const group = text(item, `${path}[${index}]`);
    // Groups from the trusted header are trimmed, so a padded name here could never match
    // the same group arriving by header.
    if (group === '' || group.trim() !== group || /[\u0000-\u001f\u007f]/.test(group)) {
      fail(`${path}[${index}]`, 'a group name must be non-empty, without surrounding spaces or control characters', 'write the name as the policies spell it');
    }
    return group;
  });
  return [...new Set(groups)];
}

function readTrustedHeaders(value: unknown, text: ReadText): GuardConfig['auth']['trustedHeaders'] {
  if (value === undefined) return undefined;
  const trusted = readObject(value, 'auth.trustedHeaders', TRUSTED_HEADERS_KEYS);
  if (trusted.agent === undefined) {
    fail('auth.trustedHeaders.agent', 'missing', 'name the header in which the reverse proxy puts the agent, e.g. X-Remote-User');
  }
  const agent = readTrustedHeaderName(trusted.agent, 'auth.trustedHeaders.agent', text);
  const groups = trusted.groups === undefined ? undefined : readTrustedHeaderName(trusted.groups, 'auth.trustedHeaders.groups', text);
  if (groups === agent) fail('auth.trustedHeaders.groups', 'same header as auth.trustedHeaders.agent', 'use a separate header for the groups, e.g. X-Remote-Groups');
  const agentPrefix = trusted.agentPrefix === undefined ? '' : text(trusted.agentPrefix, 'auth.trustedHeaders.agentPrefix');
  // A non-empty prefix must make an agent IRI out of any plain header value.
  const prefixProblem = agentPrefix === '' ? undefined : findAgentIriProblem(`${agentPrefix}a`);
  if (prefixProblem !== undefined) {
    fail('auth.trustedHeaders.agentPrefix', `the prefix and a header value together ${prefixProblem}`, 'give the start of an absolute IRI, e.g. https://example.org/users/ (or "" when the header holds whole IRIs)');
  }
  return { agent, groups, agentPrefix };
}

function readTrustedHeaderName(value: unknown, path: string, text: ReadText): string {
  const name = text(value, path);
  if (!HTTP_TOKEN.test(name)) fail(path, 'not a valid HTTP header name', 'use letters, digits and -, e.g. X-Remote-User');
  const lower = name.toLowerCase();
  if (lower === 'authorization' || lower === 'x-api-key') {
    fail(path, `collides with the API key header ${name}`, 'use a header of its own, e.g. X-Remote-User');
  }
  if (STANDARD_REQUEST_HEADERS.has(lower)) fail(path, 'a standard HTTP header cannot carry a trusted identity', 'use a header of its own, e.g. X-Remote-User');
  return lower;
}

// ---- HTTP surface and rewriting ----------------------------------------------------------------

function readHost(value: unknown, text: ReadText, path = 'host'): string {
  if (value === undefined) return '0.0.0.0';
  const host = text(value, path);
  if (!/^[A-Za-z0-9.:%_-]+$/.test(host)) fail(path, 'not a host name or IP address', 'write e.g. 0.0.0.0, 127.0.0.1 or ::');
  return host;
}

function readEndpointPath(value: unknown, text: ReadText): string {
  if (value === undefined) return '/sparql';
  const path = text(value, 'path');
  if (!path.startsWith('/')) fail('path', 'must start with /', 'write e.g. /sparql');
  if (path.length > 1 && path.endsWith('/')) fail('path', 'must not end with /', 'write e.g. /sparql');
  if (!ENDPOINT_PATH.test(path)) {
    fail('path', 'must be /-separated segments of letters, digits and ._~!$&\'()+,;=@- (no ?, #, %, :, *, empty segments)', 'write e.g. /sparql');
  }
  if (path === '/healthz' || path === '/readyz') fail('path', `collides with the probe endpoint ${path}`, 'choose another path, e.g. /sparql');
  return path;
}

function readCors(value: unknown, text: ReadText): GuardConfig['cors'] {
  if (value === undefined) return { origins: undefined, credentials: false };
  const cors = readObject(value, 'cors', CORS_KEYS);
  const origins = readCorsOrigins(cors.origins, text);
  const credentials = readBoolean(cors.credentials, 'cors.credentials', false);
  // Fetch standard, CORS protocol: credentials with any origin would let every site read
  // each visitor's answers; only an explicit list may have them.
  if (credentials && origins === undefined) {
    fail('cors.credentials', 'true needs an explicit origin list', 'list the origins in cors.origins; credentials are never allowed for any origin');
  }
  return { origins, credentials };
}

function readCorsOrigins(value: unknown, text: ReadText): readonly string[] | undefined {
  if (value === undefined || value === '*') return undefined;
  const fix = 'write origins as scheme://host[:port], e.g. "https://app.example.org", no path or trailing /';
  const origins = readArray(value, 'cors.origins', `write "*" or an array of origins; ${fix}`).map((item, index) => {
    const origin = text(item, `cors.origins[${index}]`);
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    // The serialized origin is what browsers send in Origin (RFC 6454 section 6.1).
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) {
      fail(`cors.origins[${index}]`, 'not a serialized http(s) origin', fix);
    }
    return origin;
  });
  return [...new Set(origins)];
}

function readPlanCache(value: unknown): GuardConfig['planCache'] {
  const planCache = value === undefined ? {} : readObject(value, 'planCache', PLAN_CACHE_KEYS);
  return {
    maxEntries: readInteger(planCache.maxEntries, 'planCache.maxEntries', 1000, 1, 10_000_000, 'plans'),
    maxBytes: readInteger(planCache.maxBytes, 'planCache.maxBytes', 16 * 1024 * 1024, 1024, Number.MAX_SAFE_INTEGER, 'bytes'),
  };
}

/**
 * Defaults an operator of a public endpoint would pick: a client gets 10 s for its headers
 * and 30 s for its whole request, may stay silent 10 s, and 400 connections stay open at
 * most; each may hold a store connection too, so twice that plus files stays under the usual
 * open-file limit of 1024.
 */
function readHttp(value: unknown): GuardConfig['http'] {
  const http = value === undefined ? {} : readObject(value, 'http', HTTP_KEYS);
  const headersTimeoutMs = readInteger(http.headersTimeoutMs, 'http.headersTimeoutMs', 10_000, 100, MAX_TIMER_MS, 'milliseconds');
  const requestTimeoutMs = readInteger(http.requestTimeoutMs, 'http.requestTimeoutMs', 30_000, 100, MAX_TIMER_MS, 'milliseconds');
  if (requestTimeoutMs < headersTimeoutMs) {
    fail('http.requestTimeoutMs', 'is shorter than http.headersTimeoutMs', 'the whole request includes its headers: give it at least as long');
  }
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    idleTimeoutMs: readInteger(http.idleTimeoutMs, 'http.idleTimeoutMs', 10_000, 100, MAX_TIMER_MS, 'milliseconds'),
    maxConnections: readInteger(http.maxConnections, 'http.maxConnections', 400, 1, 1_000_000, 'connections'),
  };
}

function readShutdown(value: unknown): GuardConfig['shutdown'] {
  const shutdown = value === undefined ? {} : readObject(value, 'shutdown', SHUTDOWN_KEYS);
  return {
    drainMs: readInteger(shutdown.drainMs, 'shutdown.drainMs', 3_000, 0, 600_000, 'milliseconds'),
    graceMs: readInteger(shutdown.graceMs, 'shutdown.graceMs', 10_000, 0, 600_000, 'milliseconds'),
  };
}

function readMetrics(value: unknown, port: number, host: string, text: ReadText): GuardConfig['metrics'] {
  if (value === undefined) return undefined;
  const metrics = readObject(value, 'metrics', METRICS_KEYS);
  if (metrics.port === undefined) fail('metrics.port', 'missing', 'write the TCP port of the metrics listener, e.g. 9464');
  const metricsPort = readInteger(metrics.port, 'metrics.port', 9464, 0, 65_535, 'a TCP port; 0 picks a free one');
  if (metricsPort !== 0 && metricsPort === port) {
    fail('metrics.port', `is the SPARQL port ${port}`, 'give the metrics their own port, e.g. 9464');
  }
  return { port: metricsPort, host: metrics.host === undefined ? host : readHost(metrics.host, text, 'metrics.host') };
}

function readBaseIri(value: unknown, text: ReadText): string {
  if (value === undefined) return 'http://localhost/';
  const iri = text(value, 'baseIri');
  if (!SCHEME.test(iri) || NOT_IN_IRI.test(iri)) {
    fail('baseIri', 'not an absolute IRI', 'write e.g. http://localhost/ (a scheme, no spaces or <>"{}|^`\\)');
  }
  // RFC 3986 section 5.1: a base URI has no fragment.
  if (iri.includes('#')) fail('baseIri', 'must not have a #fragment', 'remove the part from #');
  return iri;
}

/**
 * The extension functions queries may call. Each entry is an absolute IRI; none may lie in
 * (or, as a namespace, cover) a store property-function namespace such as bif: or Jena's
 * text#, since those run code in the store. Duplicates are dropped.
 */
function readAllowedFunctions(value: unknown, text: ReadText): readonly string[] {
  if (value === undefined) return [];
  const fix = 'write an array of function IRIs, or namespaces ending in # or /, e.g. ["http://example.org/functions#"]';
  const entries = readArray(value, 'allowedFunctions', fix).map((item, index) => {
    const path = `allowedFunctions[${index}]`;
    const iri = text(item, path);
    if (!SCHEME.test(iri) || NOT_IN_IRI.test(iri)) {
      fail(path, 'not an absolute IRI', 'write e.g. http://example.org/functions#len (a scheme, no spaces or <>"{}|^`\\)');
    }
    const denied = findDeniedNamespace(iri);
    if (denied !== undefined) {
      fail(path, `lies in or covers the store namespace ${denied}, whose functions run code in the store`, 'remove it; these can never be allowed');
    }
    return iri;
  });
  return [...new Set(entries)];
}

function readEmbedded(value: unknown, paths: (value: unknown, path: string, what: string) => readonly string[]): GuardConfig['embedded'] {
  if (value === undefined) return { data: [] };
  const embedded = readObject(value, 'embedded', EMBEDDED_KEYS);
  return { data: paths(embedded.data, 'embedded.data', 'data file (Turtle, TriG, N-Triples, N-Quads)') };
}

// ---- environment overrides -----------------------------------------------------------------------

/** The environment's value when set, else the file's; both are checked, so a bad file value never hides. */
function override<T>(fromFile: T, fromEnvironment: T | undefined): T {
  return fromEnvironment ?? fromFile;
}

function readIntegerVariable(env: NodeJS.ProcessEnv, name: string, min: number, max: number, what: string): number | undefined {
  const value = env[name];
  if (value === undefined) return undefined;
  const number = /^\d{1,10}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!(number >= min && number <= max)) {
    throw new ConfigError(`environment variable ${name}: expected a whole number from ${min} to ${max} (give ${what}, or unset it)`);
  }
  return number;
}

function readPortOverride(env: NodeJS.ProcessEnv): number | undefined {
  return readIntegerVariable(env, 'PORT', 0, 65_535, 'the TCP port to listen on');
}

function readWorkersOverride(env: NodeJS.ProcessEnv): number | undefined {
  return readIntegerVariable(env, 'GUARD_WORKERS', 1, MAX_WORKERS, 'the number of worker processes');
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
