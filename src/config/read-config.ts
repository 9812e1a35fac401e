// Reads the JSON configuration into one frozen, fully checked GuardConfig, every key declared once in CONFIG_KEYS.

import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createPublicKey } from 'node:crypto';
import { ASYMMETRIC_ALGORITHMS, type JwtSettings } from '../auth/create-jwt-verifier.js';
import { findAgentIriProblem, isAbsoluteIri } from '../iri.js';
import { findDeniedNamespace } from '../property-function-namespaces.js';
import { ConfigError } from './config-error.js';
import { expandPlaceholders } from './expand-placeholders.js';
import { MAX_TIMER_MS } from '../max-timer-ms.js';
import { nearestWord } from '../nearest-word.js';
import { decodeUtf8Text, NotUtf8Error } from '../decode-utf8-text.js';
import { findRepeatedKey } from './find-repeated-key.js';

export { ConfigError } from './config-error.js';

/**
 * One configuration key, declared once (docs/design/config.md): how its value is read
 * and checked, what an absent key stands for, and the environment variable that overrides it.
 * The GuardConfig type, the unknown-key check, the defaults and the README table's test all
 * come from these declarations.
 */
export interface ConfigKey<T> {
  /** Reads and checks the value at `path`; gets `default` in place of an absent value. */
  readonly read: (value: unknown, path: string, context: ReadContext) => T;
  /**
   * The value, as an operator would write it, that an absent key stands for; undefined when
   * absence means something no value says (no upstream: the embedded store).
   */
  readonly default?: unknown;
  /** The fix of the "missing" message, for a key that must be given when its object is. */
  readonly required?: string;
  /** An environment variable whose value replaces the file's; both are checked. */
  readonly env?: { readonly name: string; readonly read: (env: NodeJS.ProcessEnv) => T | undefined };
  /** The keys of an object value, in the order they are read and listed in messages. */
  readonly keys?: ConfigKeys;
}

/** The keys of one object of the configuration, by name. */
export type ConfigKeys = { readonly [name: string]: ConfigKey<unknown> };

/** The values read from an object of `keys`. */
type ValuesOf<K extends ConfigKeys> = { readonly [N in keyof K]: K[N] extends ConfigKey<infer T> ? T : never };

/** What a key's reader may use besides its value. */
export interface ReadContext {
  readonly env: NodeJS.ProcessEnv;
  /** The folder relative paths resolve against. */
  readonly baseDir: string;
  /** The top-level values read so far (the metrics listener needs `port` and `host`). */
  readonly root: Readonly<Record<string, unknown>>;
  /** The values of the enclosing object read so far (checks across keys of one object). */
  readonly siblings: Readonly<Record<string, unknown>>;
}

/** Where the configuration came from: the file (for relative paths) and the environment. */
export interface ConfigContext {
  readonly configFile: string | undefined;
  readonly env: NodeJS.ProcessEnv;
}

const MAX_WORKERS = 64;
/** JWK members that only a private or secret key has (RFC 7518 section 6): never in a verifier's key set. */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];

/** RFC 9110 section 5.1: a field name is a token. */
const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** RFC 9110 section 5.5: a field value is visible Latin-1 characters, spaces and tabs. */
const HTTP_FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Headers the upstream client sets or that frame the message: an operator value would break it. */
const PROXY_OWNED_UPSTREAM_HEADERS = new Set([
  'accept',
  // Always `identity` (upstream/create-upstream.ts): an operator's gzip was replaced unsaid.
  'accept-encoding',
  'connection',
  'content-length',
  'content-type',
  'expect',
  'host',
  'keep-alive',
  'proxy-connection',
  'te',
  // The W3C trace context of each request (http/read-trace-context.ts), never a fixed one.
  'traceparent',
  'tracestate',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
/** Standard request headers that a client always controls; none can carry a trusted identity. */
const STANDARD_REQUEST_HEADERS = new Set([
  'accept',
  'accept-encoding',
  'accept-language',
  'connection',
  'content-length',
  'content-type',
  'cookie',
  'host',
  'origin',
  'referer',
  'te',
  'transfer-encoding',
  'upgrade',
  'user-agent',
]);
/** SPARQL 1.1 Protocol parameters: the guard alone decides them (sections 2.1 and 2.2). */
const PROTOCOL_PARAMETERS = ['query', 'update', 'default-graph-uri', 'named-graph-uri', 'using-graph-uri', 'using-named-graph-uri'];
/** A path of segments of RFC 3986 pchar, minus `%` (no encoded forms) and `:` `*` (route syntax). */
const ENDPOINT_PATH = /^(\/[A-Za-z0-9._~!$&'()+,;=@-]+)+$/;
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

const ISSUER_FIX = 'give the iss value of the tokens, e.g. https://idp.example.org/realms/main';
const AUDIENCE_FIX = 'give the aud value the issuer puts in tokens for this service, e.g. "sparql"';

/** An entry of `auth.apiKeys`. */
const API_KEY_KEYS = {
  agent: key({ required: 'give the agent IRI this key identifies, e.g. https://example.org/agents/alice', read: readApiKeyAgent }),
  /** Without duplicates. */
  groups: key({ default: [], read: readGroups }),
  /** Lower-case hex. */
  sha256: key({ required: 'run "sparql-guard hash-key" to make a key and its digest', read: readSha256 }),
};

/** `auth.trustedHeaders`: header names lower-cased (node's spelling of request headers). */
const TRUSTED_HEADERS_KEYS = {
  agent: key({ required: 'name the header in which the reverse proxy puts the agent, e.g. X-Remote-User', read: readTrustedHeaderName }),
  groups: key({ read: readTrustedGroupsHeader }),
  agentPrefix: key({ default: '', read: agentPrefixReader('a header value', 'https://example.org/users/', 'the header holds whole IRIs') }),
};

/** `auth.jwt`, read by readJwt into JwtSettings (its order of checks puts the key source after the audience). */
const JWT_KEYS = {
  issuer: key({ required: ISSUER_FIX, read: readIssuer }),
  audience: key({ required: AUDIENCE_FIX, read: readAudience }),
  jwksUri: key({ read: (value, path, context) => (value === undefined ? undefined : readJwksUri(readText(value, path, context))) }),
  jwks: key({ read: (value) => (value === undefined ? undefined : readInlineJwks(value)) }),
  publicKey: key({ read: (value, path, context) => (value === undefined ? undefined : readPublicKeyPem(readText(value, path, context))) }),
  algorithms: key({ default: [...ASYMMETRIC_ALGORITHMS], read: readAlgorithms }),
  clockToleranceSeconds: integer(30, 0, 300, 'seconds'),
  agentClaim: key({ default: 'sub', read: readAgentClaim }),
  agentPrefix: key({
    default: '',
    read: agentPrefixReader('a claim value', 'https://idp.example.org/users/', 'the claim holds whole IRIs'),
  }),
  groupsClaim: key({ read: readGroupsClaim }),
  claims: key({ read: readNamedClaims }),
  jwksRefreshCooldownMs: integer(30_000, 1000, 86_400_000, 'milliseconds'),
  cacheMaxEntries: integer(10_000, 0, 1_000_000, 'tokens; 0 verifies every request'),
};

/** A fact source's name: it appears in logs, metric labels and as the origin `facts:<name>`. */
const FACT_SOURCE_NAME = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * An entry of `facts` (docs/configuration.md): a CONSTRUCT the guard runs against its store at
 * start and every `refreshMs`, whose triples join the policy files as input to the rules.
 */
const FACT_SOURCE_KEYS = {
  name: key({ required: 'name the source, e.g. "members" (letters, digits, . _ -)', read: readFactSourceName }),
  query: key({ required: 'give a SPARQL CONSTRUCT query, e.g. "CONSTRUCT { ?u groups:memberOf ?g } WHERE { ... }"', read: readText }),
  refreshMs: integer(60_000, 1000, MAX_TIMER_MS, 'milliseconds between two reads of the source'),
  /** The whole answer must arrive within it. */
  timeoutMs: integer(30_000, 100, MAX_TIMER_MS, 'milliseconds'),
  maxTriples: integer(1_000_000, 1, 100_000_000, 'triples'),
  maxBytes: integer(256 * 1024 * 1024, 1024, 2 * 1024 * 1024 * 1024, 'bytes of one answer'),
  /** Absent: ten times refreshMs. */
  maxStaleMs: key({ read: readMaxStale }),
  /** Whether the source may state policies (guard:Policy and the policy terms); false: facts only. */
  policies: boolean(false),
};

/** An entry of the configuration's `facts`, as read. */
export type FactSourceConfig = ValuesOf<typeof FACT_SOURCE_KEYS>;

/**
 * Every key of the configuration file, in the order they are read (a key may check one read
 * before it) and listed in messages. The README's configuration table is tested against it.
 */
export const CONFIG_KEYS = {
  /** Absolute http(s) URL of the store's query endpoint; undefined = the embedded default store. */
  upstream: key({ read: readUpstream, env: { name: 'GUARD_UPSTREAM', read: readUpstreamOverride } }),
  /** Headers added to every upstream request, names as the operator spelled them. */
  upstreamHeaders: key({ default: {}, read: readUpstreamHeaders }),
  /** Absolute paths of the policy files, in listing order. */
  policies: paths('policy file'),
  /** Absolute paths of operator rule files (the shipped rules are added elsewhere). */
  rules: paths('N3 rule file'),
  /** Fact sources in the store (FACT_SOURCE_KEYS); [] = the policy files alone. */
  facts: key({ default: [], read: readFactSources }),
  /** The most graphs one guard:readGraphPrefix may grant; a load listing more fails. */
  maxPrefixGraphs: integer(10_000, 1, 1_000_000, 'graphs'),
  /** How often the graphs under the guard:readGraphPrefix values are listed again (a reload of files and listing). */
  prefixRefreshMs: integer(60_000, 1000, MAX_TIMER_MS, 'milliseconds'),
  auth: section({
    apiKeys: key({ default: [], read: readApiKeys }),
    trustedHeaders: optionalSection(TRUSTED_HEADERS_KEYS),
    /** JWT bearer tokens; undefined = not accepted (a JWT-shaped bearer value is then an API key). */
    jwt: key({ keys: JWT_KEYS, read: readJwt }),
  }),
  watchPolicies: boolean(false),
  explain: boolean(false),
  timeoutMs: integer(60_000, 1, MAX_TIMER_MS, 'milliseconds'),
  port: { ...integer(8080, 0, 65_535, 'a TCP port; 0 picks a free one'), env: { name: 'PORT', read: readPortOverride } },
  host: key({ default: '0.0.0.0', read: readHost }),
  /** Starts with `/`, no trailing `/`, no `?` or `#`. */
  path: key({ default: '/sparql', read: readEndpointPath }),
  /** Cross-origin access from browsers (docs/design/http.md, "CORS with credentials"). */
  cors: section({
    /** Allowed origins, serialized (`https://app.example.org`); undefined = any origin is echoed. */
    origins: key({ default: '*', read: readCorsOrigins }),
    /** Access-Control-Allow-Credentials for the listed origins; only with an explicit `origins` list. */
    credentials: key({ default: false, read: readCorsCredentials }),
  }),
  /** Serve the query page at GET {path} for browsers (text/html, no query string). */
  ui: boolean(true),
  /** Bounds of the plan cache (docs/design/sparql.md#plan-cache). */
  planCache: section({
    maxEntries: integer(1000, 1, 10_000_000, 'plans'),
    maxBytes: integer(16 * 1024 * 1024, 1024, Number.MAX_SAFE_INTEGER, 'bytes'),
  }),
  /** Absolute IRI without fragment, against which relative IRIs in queries resolve. */
  baseIri: key({ default: 'http://localhost/', read: readBaseIri }),
  maxQueryDepth: integer(64, 1, 256, 'levels of nesting'),
  /** Extension function IRIs a query may call: exact IRIs, or namespaces ending in `#` or `/`; [] by default. */
  allowedFunctions: key({ default: [], read: readAllowedFunctions }),
  /** How row rules are checked in the rewritten query: `join` (every store) or `exists` (Oxigraph, Jena; never Virtuoso 7.2). */
  rowChecks: key({ default: 'join', read: readRowChecks }),
  /**
   * How the forwarded query names its dataset: `clauses` (FROM, FROM NAMED), `graph-filters`, or `auto`
   * (graph filters where the store says it is Virtuoso, clauses elsewhere; docs/design/sparql.md).
   */
  datasetForm: key({ default: 'auto', read: readDatasetForm }),
  workers: { ...integer(1, 1, MAX_WORKERS, 'processes'), env: { name: 'GUARD_WORKERS', read: readWorkersOverride } },
  /** Absolute paths of data files for the embedded store; [] = the demo data. */
  embedded: section({ data: paths('data file (Turtle, TriG, N-Triples, N-Quads)') }),
  /**
   * Bounds on what a client controls (docs/design/server.md, "Hostile clients"). The defaults are
   * those an operator of a public endpoint would pick: a client gets 10 s for its headers and
   * 30 s for its whole request, may stay silent 10 s, and 400 connections stay open at most;
   * each may hold a store connection too, so twice that plus files stays under the usual
   * open-file limit of 1024.
   */
  http: section({
    /** Time to receive a request's whole header section. */
    headersTimeoutMs: integer(10_000, 100, MAX_TIMER_MS, 'milliseconds'),
    /** Time to receive a whole request, headers and body. */
    requestTimeoutMs: key({ default: 30_000, read: readRequestTimeout }),
    /** Longest silence of a connection while a request arrives, and of an idle keep-alive connection. */
    idleTimeoutMs: integer(10_000, 100, MAX_TIMER_MS, 'milliseconds'),
    /** Open client connections past which new ones are refused with 503. */
    maxConnections: integer(400, 1, 1_000_000, 'connections'),
  }),
  /** The SIGTERM sequence: drain (still serving, /readyz 503), then a bounded grace. */
  shutdown: section({
    /** How long the guard keeps serving after SIGTERM, with /readyz at 503, before it stops accepting. */
    drainMs: integer(3_000, 0, 600_000, 'milliseconds'),
    /** How long requests in flight may then take before their connections are cut. */
    graceMs: integer(10_000, 0, 600_000, 'milliseconds'),
  }),
  /** Keep a valid X-Request-Id from the request (set by a trusted front proxy) instead of the guard's own id. */
  trustRequestId: boolean(false),
  /** Audit records, one JSON line per request (docs/audit.md); undefined = none. */
  audit: optionalSection({
    /** Absolute path of the file the records are appended to, or `-` for standard output. */
    file: key({
      required: 'give the path of the audit file, e.g. "/var/log/sparql-guard/audit.jsonl", or "-" for standard output',
      read: readAuditFile,
    }),
    /** Write the query text the caller sent (it may hold constants the records otherwise never carry). */
    queryText: boolean(false),
    /** IRIs one list of a record (dataset.default, dataset.named, policies) may hold; past it a count and a digest. */
    maxListed: integer(64, 0, 1_000_000, 'IRIs per list'),
    /** Write every list in full, however long (maxListed then does not apply). */
    fullLists: boolean(false),
  }),
  /** The Prometheus listener (GET /metrics); undefined = no metrics. Read after `port` and `host`. */
  metrics: optionalSection({
    port: key({ required: 'write the TCP port of the metrics listener, e.g. 9464', read: readMetricsPort }),
    /** Defaults to `host`. */
    host: key({ read: readMetricsHost }),
  }),
};

/** The whole configuration of one guard process, as CONFIG_KEYS reads it; deeply frozen. */
export interface GuardConfig extends ValuesOf<typeof CONFIG_KEYS> {
  /** Absolute path of the file read, undefined when built from defaults and environment only. */
  readonly configFile: string | undefined;
}

/**
 * Reads the configuration named by GUARD_CONFIG (resolved against the working folder, or under
 * `npm start` the folder it was typed in) and
 * checks it with parseConfig; `namedBy` is what the operator set (a command's --config is passed
 * in as GUARD_CONFIG), so the fix of a file that cannot be read names it. Without GUARD_CONFIG the defaults apply, with the environment
 * overrides; whether that is acceptable is the caller's decision (it can test `configFile`).
 * Throws ConfigError for a missing or unreadable file, invalid JSON (with line and column,
 * never the text) and every rule of parseConfig.
 */
export function readConfig(env: NodeJS.ProcessEnv, namedBy: 'GUARD_CONFIG' | '--config' = 'GUARD_CONFIG'): GuardConfig {
  const named = env.GUARD_CONFIG;
  if (named === undefined) return parseConfig({}, { configFile: undefined, env });
  if (named.trim() === '') {
    throw new ConfigError(
      namedBy === '--config'
        ? 'option --config: empty (give the path of the JSON configuration file)'
        : 'environment variable GUARD_CONFIG: empty (give the path of the JSON configuration file, or unset it)',
    );
  }
  // `npm start` runs in the package's folder whatever folder it was typed in; npm names that one
  // INIT_CWD, which is where the operator's relative path starts.
  const typedIn = env.npm_lifecycle_event === 'start' && env.INIT_CWD ? env.INIT_CWD : process.cwd();
  const configFile = resolve(typedIn, named);
  let text: string;
  try {
    text = decodeUtf8Text(readFileSync(configFile));
  } catch (error) {
    if (error instanceof NotUtf8Error) throw new ConfigError(`config file ${configFile}: ${error.message}`);
    const code = (error as NodeJS.ErrnoException).code;
    const problem =
      code === 'ENOENT'
        ? 'not found'
        : code === 'EISDIR'
          ? 'is a folder'
          : code === 'EACCES' || code === 'EPERM'
            ? 'cannot be read (permission denied)'
            : `cannot be read (${code ?? 'unknown error'})`;
    throw new ConfigError(
      `config file ${configFile}: ${problem} (${namedBy === '--config' ? 'give --config' : 'set GUARD_CONFIG to'} the path of a readable JSON file)`,
    );
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
  const configFile = context.configFile === undefined ? undefined : resolve(context.configFile);
  if (typeof json === 'object' && json !== null && !Array.isArray(json) && 'corsOrigins' in json) {
    fail('corsOrigins', 'replaced by cors.origins', 'write "cors": { "origins": [...] } instead');
  }
  const values: Record<string, unknown> = { configFile };
  const root: ReadContext = {
    env: context.env,
    baseDir: configFile === undefined ? process.cwd() : dirname(configFile),
    root: values,
    siblings: values,
  };
  readObjectKeys(json, '', CONFIG_KEYS, root, values);
  return deepFreeze(values as unknown as GuardConfig);
}

// ---- the table's readers ------------------------------------------------------------------

/** Declares a key; only names the type, so that the table's types are inferred. */
function key<T>(declaration: ConfigKey<T>): ConfigKey<T> {
  return declaration;
}

function boolean(fallback: boolean): ConfigKey<boolean> {
  return { default: fallback, read: (value, path) => readBoolean(value, path, fallback) };
}

/** A whole number from `min` to `max`; the message names the unit and `fallback`. */
function integer(fallback: number, min: number, max: number, unit: string): ConfigKey<number> {
  return { default: fallback, read: (value, path) => readInteger(value, path, fallback, min, max, unit) };
}

/** A list of file paths, relative to the configuration file; `what` names one file. */
function paths(what: string): ConfigKey<readonly string[]> {
  return { default: [], read: (value, path, context) => readPaths(value, path, what, context) };
}

/** An object of known keys; absent, each key takes its default. */
function section<K extends ConfigKeys>(keys: K): ConfigKey<ValuesOf<K>> {
  return { keys, default: {}, read: (value, path, context) => readObjectKeys(value, path, keys, context) };
}

/** An object of known keys whose absence turns a feature off (undefined). */
function optionalSection<K extends ConfigKeys>(keys: K): ConfigKey<ValuesOf<K> | undefined> {
  return { keys, read: (value, path, context) => (value === undefined ? undefined : readObjectKeys(value, path, keys, context)) };
}

/** Reads an object of `keys` in their order into `values`; unknown keys are refused first. */
function readObjectKeys<K extends ConfigKeys>(
  value: unknown,
  path: string,
  keys: K,
  context: ReadContext,
  values: Record<string, unknown> = {},
): ValuesOf<K> {
  const object = readObject(value, path, Object.keys(keys));
  const inner: ReadContext = { ...context, siblings: values };
  for (const [name, declaration] of Object.entries(keys)) {
    values[name] = readKey(declaration, object[name], keyPath(path, name), inner);
  }
  return values as ValuesOf<K>;
}

/** One key: missing if required, else its value or default read, then the environment's override. */
function readKey<T>(declaration: ConfigKey<T>, value: unknown, path: string, context: ReadContext): T {
  if (value === undefined && declaration.required !== undefined) fail(path, 'missing', declaration.required);
  const fromFile = declaration.read(value === undefined ? declaration.default : value, path, context);
  return declaration.env?.read(context.env) ?? fromFile;
}

/** A string with its `${NAME}` placeholders expanded. */
function readText(value: unknown, path: string, context: ReadContext): string {
  return expandPlaceholders(readString(value, path), context.env, path);
}

/** Parses JSON text (decodeUtf8Text already dropped a byte order mark); a syntax error reports line and column, never the text around it. */
function parseJson(body: string, configFile: string): unknown {
  let json: unknown;
  try {
    json = JSON.parse(body) as unknown;
  } catch (error) {
    const message = error instanceof Error ? error.message : '';
    const where = jsonErrorPlace(message, body);
    // V8 phrases such as "Expected ',' or '}' after property value" name only JSON syntax;
    // others ("Unexpected token 'x', "...") quote the file, which may hold secrets.
    const phrase = /^(Expected [^"]*?|Unexpected end of JSON input)(?= in JSON|$)/.exec(message)?.[1];
    const detail = [phrase, where].filter((part) => part !== undefined).join(' ');
    throw new ConfigError(
      `config file ${configFile}: invalid JSON${detail === '' ? '' : ` (${detail})`} (fix the syntax; JSON has no comments or trailing commas)`,
    );
  }
  const repeated = findRepeatedKey(body);
  if (repeated !== undefined) {
    const path = repeated.path.reduce<string>(
      (parent, part) => (typeof part === 'number' ? `${parent}[${part}]` : keyPath(parent, part)),
      '',
    );
    fail(path, `written twice, on lines ${repeated.firstLine} and ${repeated.secondLine}`, 'JSON would keep only the last: remove one');
  }
  return json;
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
      const suggestion = nearestWord(key, known);
      const fix = suggestion === undefined ? `known keys here: ${known.join(', ')}` : `did you mean ${keyPath(path, suggestion)}?`;
      fail(keyPath(path, key), 'unknown key', fix);
    }
  }
  return value as Partial<Record<K, unknown>>;
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

/** A list of file paths, each resolved against the context's folder; a path listed twice is a mistake. */
function readPaths(value: unknown, path: string, what: string, context: ReadContext): readonly string[] {
  const files: string[] = [];
  readArray(value, path, `write an array of ${what} paths, relative to the configuration file`).forEach((item, index) => {
    const itemPath = `${path}[${index}]`;
    const file = readText(item, itemPath, context);
    if (file.trim() === '') fail(itemPath, 'empty path', `give the path of a ${what}`);
    const absolute = resolve(context.baseDir, file);
    const earlier = files.indexOf(absolute);
    if (earlier >= 0) fail(itemPath, `same file as ${path}[${earlier}]`, 'list each file once');
    // A folder would fail the load with EISDIR and no key; a missing file is the load's to report (it may appear before a reload).
    if (statSync(absolute, { throwIfNoEntry: false })?.isDirectory() === true) {
      fail(itemPath, `${absolute} is a folder`, `it must name one ${what}: list the files of the folder one by one`);
    }
    files.push(absolute);
  });
  return files;
}

// ---- audit ---------------------------------------------------------------------------------

function readAuditFile(value: unknown, path: string, context: ReadContext): string {
  const file = readText(value, path, context);
  if (file === '-') return file;
  if (file.trim() === '') fail(path, 'empty path', 'give the path of the audit file, or "-" for standard output');
  return resolve(context.baseDir, file);
}

// ---- upstream --------------------------------------------------------------------------------

/** Checks an upstream URL; `subject` is `config upstream` or the overriding variable. */
function checkUpstream(value: string, subject: string): string {
  const problem = (text: string, fix: string): never => {
    throw new ConfigError(`${subject}: ${text} (${fix})`);
  };
  const example = "give the store's query endpoint, e.g. http://store:7878/query";
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
    if (url.searchParams.has(name))
      problem(`must not carry the SPARQL protocol parameter ${name}`, 'the guard sets the protocol parameters itself; remove it');
  }
  return url.href;
}

function readUpstream(value: unknown, path: string, context: ReadContext): string | undefined {
  return value === undefined ? undefined : checkUpstream(readText(value, path, context), 'config upstream');
}

function readUpstreamOverride(env: NodeJS.ProcessEnv): string | undefined {
  const value = env.GUARD_UPSTREAM;
  if (value === undefined) return undefined;
  if (value.trim() === '') {
    throw new ConfigError('environment variable GUARD_UPSTREAM: empty (give an http(s) URL of the store, or unset it)');
  }
  return checkUpstream(value, 'environment variable GUARD_UPSTREAM');
}

function readUpstreamHeaders(value: unknown, _path: string, context: ReadContext): Readonly<Record<string, string>> {
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
    const headerValue = readText(raw, path, context);
    if (!HTTP_FIELD_VALUE.test(headerValue)) {
      fail(
        path,
        'value holds a line break, a control character or a character outside Latin-1',
        'check the value and any environment variable it uses',
      );
    }
    seen.set(lower, name);
    headers[name] = headerValue;
  }
  return headers;
}

// ---- auth ------------------------------------------------------------------------------------

/** `auth.jwt`, read in its own order: issuer, audience, the one key source, then the rest. */
function readJwt(value: unknown, path: string, context: ReadContext): JwtSettings | undefined {
  if (value === undefined) return undefined;
  const jwt = readObject(value, path, Object.keys(JWT_KEYS));
  const read = <N extends keyof typeof JWT_KEYS>(name: N): ValuesOf<typeof JWT_KEYS>[N] =>
    readKey<unknown>(JWT_KEYS[name], jwt[name], keyPath(path, name), context) as ValuesOf<typeof JWT_KEYS>[N];
  const issuer = read('issuer');
  const audience = read('audience');
  const given = (['jwksUri', 'jwks', 'publicKey'] as const).filter((name) => jwt[name] !== undefined);
  if (given.length !== 1) {
    fail(
      path,
      given.length === 0 ? 'no key source' : `both ${given.join(' and ')}`,
      "give exactly one of jwksUri (the issuer's JWKS URL), jwks (an inline key set) or publicKey (a PEM public key)",
    );
  }
  const jwksUri = read('jwksUri');
  const jwks = read('jwks');
  const publicKey = read('publicKey');
  const keys: JwtSettings['keys'] =
    jwksUri !== undefined
      ? { kind: 'jwksUri', uri: jwksUri }
      : jwks !== undefined
        ? { kind: 'jwks', jwks }
        : { kind: 'publicKey', pem: publicKey ?? '' };
  const algorithms = read('algorithms');
  const agentClaim = read('agentClaim');
  const agentPrefix = read('agentPrefix');
  return {
    issuer,
    audience,
    keys,
    algorithms,
    clockToleranceSeconds: read('clockToleranceSeconds'),
    agentClaim,
    agentPrefix,
    groupsClaim: read('groupsClaim'),
    claims: read('claims'),
    jwksRefreshCooldownMs: read('jwksRefreshCooldownMs'),
    cacheMaxEntries: read('cacheMaxEntries'),
  };
}

function readIssuer(value: unknown, path: string, context: ReadContext): string {
  const issuer = readText(value, path, context);
  if (issuer === '') fail(path, 'empty', ISSUER_FIX);
  return issuer;
}

function readAudience(value: unknown, path: string, context: ReadContext): readonly string[] {
  const list = typeof value === 'string' ? [value] : readArray(value, path, 'write a string or an array of strings');
  const audience = list.map((item, index) => readText(item, typeof value === 'string' ? path : `${path}[${index}]`, context));
  if (audience.length === 0 || audience.includes('')) fail(path, 'empty', AUDIENCE_FIX);
  return [...new Set(audience)];
}

function readAgentClaim(value: unknown, path: string, context: ReadContext): string {
  const agentClaim = readText(value, path, context);
  if (agentClaim === '') fail(path, 'empty', 'name the claim that gives the agent, e.g. sub or webid');
  return agentClaim;
}

/** A prefix that, put before any plain header or claim value (`valueName`), makes an agent IRI; '' = whole IRIs. */
function agentPrefixReader(valueName: string, example: string, whenEmpty: string): ConfigKey<string>['read'] {
  return (value, path, context) => {
    const agentPrefix = readText(value, path, context);
    const prefixProblem = agentPrefix === '' ? undefined : findAgentIriProblem(`${agentPrefix}a`);
    if (prefixProblem !== undefined) {
      fail(
        path,
        `the prefix and ${valueName} together ${prefixProblem}`,
        `give the start of an absolute IRI, e.g. ${example} (or "" when ${whenEmpty})`,
      );
    }
    return agentPrefix;
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
    fail(
      'auth.jwt.jwksUri',
      'not an absolute http(s) URL',
      "give the jwks_uri of the issuer's discovery document, e.g. https://idp.example.org/realms/main/protocol/openid-connect/certs",
    );
  }
  if (url.username !== '' || url.password !== '')
    fail('auth.jwt.jwksUri', 'must not carry a user or password', 'a JWKS is public; remove them');
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
    if (kty !== 'RSA' && kty !== 'EC' && kty !== 'OKP')
      fail(`${path}.kty`, 'expected RSA, EC or OKP (symmetric oct keys are refused)', fix);
    const secret = PRIVATE_JWK_MEMBERS.find((member) => Object.hasOwn(key, member));
    if (secret !== undefined)
      fail(`${path}.${secret}`, 'a private key member', 'give the public key only; never put a private key in the configuration');
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

function readAlgorithms(value: unknown, path: string, context: ReadContext): readonly string[] {
  const fix = `write some of ${ASYMMETRIC_ALGORITHMS.join(', ')}`;
  const list = readArray(value, path, fix).map((item, index) => {
    const itemPath = `${path}[${index}]`;
    const algorithm = readText(item, itemPath, context);
    if (algorithm.toLowerCase() === 'none') fail(itemPath, 'unsigned tokens (none) are never accepted', fix);
    if (/^HS/i.test(algorithm)) fail(itemPath, 'HMAC algorithms are refused (a public key must never serve as a shared secret)', fix);
    if (!ASYMMETRIC_ALGORITHMS.includes(algorithm)) fail(itemPath, 'not a known asymmetric JWS algorithm', fix);
    return algorithm;
  });
  if (list.length === 0) fail(path, 'empty', fix);
  return [...new Set(list)];
}

/** A dotted path (`realm_access.roles`), or an array of member names when a name holds a dot. */
function readGroupsClaim(value: unknown, path: string, context: ReadContext): readonly string[] | undefined {
  if (value === undefined) return undefined;
  return readClaimPath(
    value,
    path,
    context,
    'write a dotted path such as "realm_access.roles", or an array of member names such as ["https://example.org/claims", "groups"]',
  );
}

/** A claim's place in the token: a dotted path, or an array of member names (namespaced claims hold dots). */
function readClaimPath(value: unknown, path: string, context: ReadContext, fix: string): readonly string[] {
  const members =
    typeof value === 'string'
      ? readText(value, path, context).split('.')
      : readArray(value, path, fix).map((item, index) => readText(item, `${path}[${index}]`, context));
  if (members.length === 0 || members.includes('')) fail(path, 'empty member name', fix);
  return members;
}

/** A name templates and row rules can spell both as `{claim.NAME}` and as `?claim_NAME`. */
const NAMED_CLAIM = /^[A-Za-z0-9_]{1,64}$/;

/** `auth.jwt.claims`: short name -> where the claim is, for templates and row rules; {} = top-level claims only. */
function readNamedClaims(value: unknown, path: string, context: ReadContext): ReadonlyMap<string, readonly string[]> {
  const named = new Map<string, readonly string[]>();
  if (value === undefined) return named;
  const fix = 'map a short name to a claim\'s path, e.g. { "tenant": ["https://example.org/claims/tenant"] }';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, `expected an object, found ${typeName(value)}`, fix);
  for (const [name, place] of Object.entries(value)) {
    const itemPath = keyPath(path, name);
    if (!NAMED_CLAIM.test(name)) {
      fail(
        itemPath,
        'not a name templates and row rules can read',
        'use 1 to 64 letters, digits or _ (read as {claim.NAME} and ?claim_NAME)',
      );
    }
    named.set(name, readClaimPath(place, itemPath, context, fix));
  }
  return named;
}

function readApiKeys(value: unknown, path: string, context: ReadContext): readonly ValuesOf<typeof API_KEY_KEYS>[] {
  const entries = readArray(value, path, 'write an array of { "agent", "groups", "sha256" } entries');
  const firstIndexOfDigest = new Map<string, number>();
  return entries.map((item, index) => {
    const entryPath = `${path}[${index}]`;
    const entry = readObjectKeys(item, entryPath, API_KEY_KEYS, context);
    const earlier = firstIndexOfDigest.get(entry.sha256);
    if (earlier !== undefined) fail(`${entryPath}.sha256`, `same key as ${path}[${earlier}]`, 'give each entry its own key');
    firstIndexOfDigest.set(entry.sha256, index);
    return entry;
  });
}

function readApiKeyAgent(value: unknown, path: string, context: ReadContext): string {
  const agent = readText(value, path, context);
  const agentProblem = findAgentIriProblem(agent);
  if (agentProblem !== undefined) fail(path, agentProblem, 'give an absolute IRI such as https://example.org/agents/alice');
  return agent;
}

/** The digest, lower-cased. */
function readSha256(value: unknown, path: string, context: ReadContext): string {
  const sha256 = readText(value, path, context);
  if (!HEX_SHA256.test(sha256)) fail(path, 'expected 64 hexadecimal characters', 'run "sparql-guard hash-key" to make one');
  return sha256.toLowerCase();
}

/** What an API key entry's group name must be (hash-key holds the groups it writes to it too). */
export const GROUP_NAME_RULE = 'a group name must be non-empty, without surrounding spaces or control characters';

/**
 * Whether `group` may name a group of an API key entry. Groups from the trusted header are
 * trimmed, so a padded name here could never match the same group arriving by header.
 */
export function isGroupName(group: string): boolean {
  return group !== '' && group.trim() === group && !/[\u0000-\u001f\u007f]/.test(group);
}

function readGroups(value: unknown, path: string, context: ReadContext): readonly string[] {
  const groups = readArray(value, path, 'write an array of group names, e.g. ["staff"]').map((item, index) => {
    const group = readText(item, `${path}[${index}]`, context);
    if (!isGroupName(group)) fail(`${path}[${index}]`, GROUP_NAME_RULE, 'write the name as the policies spell it');
    return group;
  });
  return [...new Set(groups)];
}

function readTrustedGroupsHeader(value: unknown, path: string, context: ReadContext): string | undefined {
  if (value === undefined) return undefined;
  const groups = readTrustedHeaderName(value, path, context);
  if (groups === context.siblings.agent)
    fail(path, 'same header as auth.trustedHeaders.agent', 'use a separate header for the groups, e.g. X-Remote-Groups');
  return groups;
}

function readTrustedHeaderName(value: unknown, path: string, context: ReadContext): string {
  const name = readText(value, path, context);
  if (!HTTP_TOKEN.test(name)) fail(path, 'not a valid HTTP header name', 'use letters, digits and -, e.g. X-Remote-User');
  const lower = name.toLowerCase();
  if (lower === 'authorization' || lower === 'x-api-key') {
    fail(path, `collides with the API key header ${name}`, 'use a header of its own, e.g. X-Remote-User');
  }
  if (STANDARD_REQUEST_HEADERS.has(lower))
    fail(path, 'a standard HTTP header cannot carry a trusted identity', 'use a header of its own, e.g. X-Remote-User');
  return lower;
}

// ---- fact sources ------------------------------------------------------------------------------

function readFactSources(value: unknown, path: string, context: ReadContext): readonly FactSourceConfig[] {
  const entries = readArray(value, path, 'write an array of { "name", "query", "refreshMs", ... } entries');
  const firstIndexOfName = new Map<string, number>();
  return entries.map((item, index) => {
    const entryPath = `${path}[${index}]`;
    const entry = readObjectKeys(item, entryPath, FACT_SOURCE_KEYS, context);
    const earlier = firstIndexOfName.get(entry.name);
    if (earlier !== undefined) fail(`${entryPath}.name`, `same name as ${path}[${earlier}]`, 'give each source its own name');
    firstIndexOfName.set(entry.name, index);
    return entry;
  });
}

function readFactSourceName(value: unknown, path: string, context: ReadContext): string {
  const name = readText(value, path, context);
  if (!FACT_SOURCE_NAME.test(name)) fail(path, 'must be 1 to 64 letters, digits, dots, dashes or underscores', 'write e.g. "members"');
  return name;
}

/** At least refreshMs (a set is never stale before its next refresh is due); absent: ten times refreshMs. */
function readMaxStale(value: unknown, path: string, context: ReadContext): number {
  const refreshMs = context.siblings.refreshMs as number;
  if (value === undefined) return Math.min(10 * refreshMs, MAX_TIMER_MS);
  const maxStaleMs = readInteger(value, path, 10 * refreshMs, refreshMs, MAX_TIMER_MS, 'milliseconds, at least refreshMs');
  return maxStaleMs;
}

// ---- HTTP surface and rewriting ----------------------------------------------------------------

function readHost(value: unknown, path: string, context: ReadContext): string {
  const host = readText(value, path, context);
  if (!/^[A-Za-z0-9.:%_-]+$/.test(host)) fail(path, 'not a host name or IP address', 'write e.g. 0.0.0.0, 127.0.0.1 or ::');
  return host;
}

function readRowChecks(value: unknown, path: string, context: ReadContext): 'join' | 'exists' {
  const form = readText(value, path, context);
  if (form !== 'join' && form !== 'exists') {
    fail(
      path,
      'not a form of row check',
      'write "join" (right on every store) or "exists" (faster on Oxigraph and Jena, wrong on Virtuoso 7.2)',
    );
  }
  return form;
}

function readDatasetForm(value: unknown, path: string, context: ReadContext): 'auto' | 'clauses' | 'graph-filters' {
  const form = readText(value, path, context);
  if (form !== 'auto' && form !== 'clauses' && form !== 'graph-filters') {
    fail(
      path,
      'not a dataset form',
      'write "auto" (graph filters where the store says it is Virtuoso, clauses elsewhere), "clauses" (FROM and FROM NAMED, every store) or "graph-filters" (a filter per GRAPH)',
    );
  }
  return form;
}

function readEndpointPath(value: unknown, key: string, context: ReadContext): string {
  const path = readText(value, key, context);
  if (!path.startsWith('/')) fail(key, 'must start with /', 'write e.g. /sparql');
  if (path.length > 1 && path.endsWith('/')) fail(key, 'must not end with /', 'write e.g. /sparql');
  if (!ENDPOINT_PATH.test(path)) {
    fail(
      key,
      "must be /-separated segments of letters, digits and ._~!$&'()+,;=@- (no ?, #, %, :, *, empty segments)",
      'write e.g. /sparql',
    );
  }
  if (path === '/healthz' || path === '/readyz') fail(key, `collides with the probe endpoint ${path}`, 'choose another path, e.g. /sparql');
  return path;
}

/** `"*"` (undefined: any origin) or a list of serialized origins without duplicates. */
function readCorsOrigins(value: unknown, path: string, context: ReadContext): readonly string[] | undefined {
  if (value === '*') return undefined;
  const fix = 'write origins as scheme://host[:port], e.g. "https://app.example.org", no path or trailing /';
  const origins = readArray(value, path, `write "*" or an array of origins; ${fix}`).map((item, index) => {
    const origin = readText(item, `${path}[${index}]`, context);
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    // The serialized origin is what browsers send in Origin (RFC 6454 section 6.1).
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) {
      fail(`${path}[${index}]`, 'not a serialized http(s) origin', fix);
    }
    return origin;
  });
  return [...new Set(origins)];
}

function readCorsCredentials(value: unknown, path: string, context: ReadContext): boolean {
  const credentials = readBoolean(value, path, false);
  // Fetch standard, CORS protocol: credentials with any origin would let every site read
  // each visitor's answers; only an explicit list may have them.
  if (credentials && context.siblings.origins === undefined) {
    fail(path, 'true needs an explicit origin list', 'list the origins in cors.origins; credentials are never allowed for any origin');
  }
  return credentials;
}

function readRequestTimeout(value: unknown, path: string, context: ReadContext): number {
  const requestTimeoutMs = readInteger(value, path, 30_000, 100, MAX_TIMER_MS, 'milliseconds');
  if (requestTimeoutMs < (context.siblings.headersTimeoutMs as number)) {
    fail(path, 'is shorter than http.headersTimeoutMs', 'the whole request includes its headers: give it at least as long');
  }
  return requestTimeoutMs;
}

/** The metrics port: never the SPARQL port (both 0 is fine: each picks a free one). */
function readMetricsPort(value: unknown, path: string, context: ReadContext): number {
  const port = readInteger(value, path, 9464, 0, 65_535, 'a TCP port; 0 picks a free one');
  if (port !== 0 && port === context.root.port) {
    fail(path, `is the SPARQL port ${port}`, 'give the metrics their own port, e.g. 9464');
  }
  return port;
}

function readMetricsHost(value: unknown, path: string, context: ReadContext): string {
  return value === undefined ? (context.root.host as string) : readHost(value, path, context);
}

function readBaseIri(value: unknown, path: string, context: ReadContext): string {
  const iri = readText(value, path, context);
  if (!isAbsoluteIri(iri)) {
    fail(path, 'not an absolute IRI', 'write e.g. http://localhost/ (a scheme, no spaces or <>"{}|^`\\)');
  }
  // RFC 3986 section 5.1: a base URI has no fragment.
  if (iri.includes('#')) fail(path, 'must not have a #fragment', 'remove the part from #');
  return iri;
}

/**
 * The extension functions queries may call. Each entry is an absolute IRI; none may lie in
 * (or, as a namespace, cover) a store property-function namespace such as bif: or Jena's
 * text#, since those run code in the store. Duplicates are dropped.
 */
function readAllowedFunctions(value: unknown, key: string, context: ReadContext): readonly string[] {
  const fix = 'write an array of function IRIs, or namespaces ending in # or /, e.g. ["http://example.org/functions#"]';
  const entries = readArray(value, key, fix).map((item, index) => {
    const path = `${key}[${index}]`;
    const iri = readText(item, path, context);
    if (!isAbsoluteIri(iri)) {
      fail(path, 'not an absolute IRI', 'write e.g. http://example.org/functions#len (a scheme, no spaces or <>"{}|^`\\)');
    }
    const denied = findDeniedNamespace(iri);
    if (denied !== undefined) {
      fail(
        path,
        `lies in or covers the store namespace ${denied}, whose functions run code in the store`,
        'remove it; these can never be allowed',
      );
    }
    return iri;
  });
  return [...new Set(entries)];
}

// ---- environment overrides -----------------------------------------------------------------------

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

/** The configuration an empty file gives, without environment: every key's default. */
export const DEFAULT_CONFIG: GuardConfig = parseConfig({}, { configFile: undefined, env: {} });
