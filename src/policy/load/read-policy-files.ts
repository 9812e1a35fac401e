// Reads, parses and validates the policy Turtle files: the part of a load that needs no rules (on the policy worker).

import { pathToFileURL } from 'node:url';
import { Lexer, Parser, type Quad } from 'n3';
import { GUARD, guard, isReservedIri, RDF_TYPE, XSD_STRING } from '../../vocabulary.js';
import { graphPrefixProblem, hasScheme, iriSpliceProblem, storeAliasProblem } from '../../iri.js';
import { compileGraphTemplate } from '../compile-graph-template.js';
import { policyLoadError } from '../policy-load-error.js';
import { checkVocabulary } from '../check-vocabulary.js';
import type { PolicyLimits } from '../policy-set.js';
import { MAX_TIMER_MS } from '../../max-timer-ms.js';
import { decodeUtf8Text, type NotUtf8Error } from '../../decode-utf8-text.js';
import { factOrigin } from '../store-reads/fact-origin.js';
import { parseFactSource } from './parse-fact-source.js';
import type { FactInput } from './worker-messages.js';
import { describeTerm } from './describe-term.js';
import { NO_PREFIXES, readRowRule, type FilePrefixes, type PolicyRestriction } from './read-row-rule.js';
import { FileUnsettledError, readSettledFile } from '../read-settled-file.js';

/** One declared policy as written in the Turtle, before the rules run. */
export interface PolicySource {
  readonly iri: string;
  readonly file: string;
  /** Position in order of listing, from 0. */
  readonly order: number;
  readonly hidePaths: readonly string[];
  /** `guard:readGraphTemplate` values as written, each once, validated (compileGraphTemplate). */
  readonly graphTemplates: readonly string[];
  /** `guard:readGraphPrefix` values, as stated, without repeats: the load lists the store's graphs under each. */
  readonly graphPrefixes: readonly string[];
  readonly limits: PolicyLimits;
  /** Its columns and row rule (`guard:readPath`, `guard:rowPattern`, `guard:rowClass`, `guard:rowData`). */
  readonly restriction: PolicyRestriction;
}

/** Everything the policy files and fact sources say: the policies in order of listing and all their triples. */
export interface PolicyDocument {
  readonly policies: readonly PolicySource[];
  /** Every triple of every file, then of every fact source (the rules may read any of them). */
  readonly quads: readonly Quad[];
  /** Where the triples came from, in order: `quads[first]` to `quads[first + count - 1]` are `origin`'s. */
  readonly origins: readonly QuadOrigin[];
}

/** A run of `PolicyDocument.quads` read from one place. */
export interface QuadOrigin {
  /** The absolute path of a policy file, or `facts:<name>` for a fact source. */
  readonly origin: string;
  readonly first: number;
  readonly count: number;
}

/** Predicates that only a guard:Policy may carry; on anything else they are a mistake. */
const POLICY_PREDICATES: readonly string[] = [
  guard.agent,
  guard.group,
  guard.readGraph,
  guard.readGraphTemplate,
  guard.readGraphPrefix,
  guard.hidePath,
  guard.readPath,
  guard.rowPattern,
  guard.rowClass,
  guard.rowData,
  guard.timeoutMs,
  guard.resultLimit,
  guard.maxConcurrent,
];

/** The limit predicates, by the member of PolicyLimits they set. */
const LIMIT_PREDICATES = [
  [guard.timeoutMs, 'timeoutMs', 'guard:timeoutMs'],
  [guard.resultLimit, 'resultLimit', 'guard:resultLimit'],
  [guard.maxConcurrent, 'maxConcurrent', 'guard:maxConcurrent'],
] as const;
const XSD_INTEGER = 'http://www.w3.org/2001/XMLSchema#integer';
/** The largest limit of any kind: a time limit must fit a Node timer. */
const MAX_LIMIT = MAX_TIMER_MS;

/**
 * Reads the files in order, parses them as Turtle, adds the fact sources' triples after them
 * (parseFactSource), checks every guard: IRI of both against the closed vocabulary
 * (checkVocabulary) and validates every policy (docs/design/policy.md#vocabulary); a policy that a
 * source with `policies: true` declares has the file `facts:<name>`. A source without
 * `policies` may say nothing about a declared policy. Throws PolicyLoadError on the first problem.
 * `readText` gives a file's text: from disk by default (readPolicyText); a scheduled refresh gives
 * the texts the set in force was loaded from.
 */
export async function readPolicyFiles(
  files: readonly string[],
  facts: readonly FactInput[] = [],
  readText: (file: string) => Promise<string> = readPolicyText,
): Promise<PolicyDocument> {
  const quads: Quad[] = [];
  const origins: QuadOrigin[] = [];
  /** Subject id -> [file, position of its first triple]: this is the order of listing. */
  const firstSeen = new Map<string, { file: string; fileIndex: number; position: number }>();
  /** Per policy file, its prefixes (a row pattern reads them). */
  const prefixesOf = new Map<string, FilePrefixes>();
  /** Per policy file without @base or BASE, the IRIs its relative IRI references resolved to (against the file's path). */
  const resolvedRelative = new Map<string, ReadonlySet<string>>();
  const add = (file: string, fileIndex: number, added: readonly Quad[]) => {
    checkVocabulary(added, file);
    origins.push({ origin: file, first: quads.length, count: added.length });
    for (const [position, quad] of added.entries()) {
      if (!firstSeen.has(quad.subject.id)) firstSeen.set(quad.subject.id, { file, fileIndex, position });
      quads.push(quad);
    }
  };
  for (const [fileIndex, file] of files.entries()) {
    // No prototype: a prefix may be named `constructor` or `toString`.
    const prefixes = { iris: Object.create(null) as Record<string, string>, ambiguous: new Set<string>() };
    prefixesOf.set(file, prefixes);
    const text = await readText(file);
    add(file, fileIndex, parseTurtle(text, file, prefixes));
    // A text that merely mentions a base (in a string) is taken as having one: the check only errs lenient.
    if (!/(^|[\s.;])(@base|BASE)\s*</im.test(text)) resolvedRelative.set(file, relativeIrisOf(text, file));
  }
  for (const [index, input] of facts.entries()) add(factOrigin(input.name), files.length + index, parseFactSource(input, index));

  const bySubject = new Map<string, Quad[]>();
  for (const quad of quads) {
    const list = bySubject.get(quad.subject.id);
    if (list === undefined) bySubject.set(quad.subject.id, [quad]);
    else list.push(quad);
  }

  const declared = quads.filter(
    (quad) => quad.predicate.value === RDF_TYPE && quad.object.termType === 'NamedNode' && quad.object.value === guard.Policy,
  );
  const policyIds = new Set(declared.map((quad) => quad.subject.id));
  checkFactsAboutPolicies(facts, files.length, origins, quads, policyIds);
  for (const quad of quads) {
    if (!policyIds.has(quad.subject.id) && POLICY_PREDICATES.includes(quad.predicate.value)) {
      const where = firstSeen.get(quad.subject.id);
      const named = quad.subject.termType === 'NamedNode' ? quad.subject.value : undefined;
      const what = named === undefined ? 'a blank node ' : '';
      throw policyLoadError(`${what}uses ${short(quad.predicate.value)} but is not declared a guard:Policy`, where?.file, named);
    }
  }

  const ordered = [...policyIds].sort((a, b) => {
    const x = firstSeen.get(a);
    const y = firstSeen.get(b);
    return x === undefined || y === undefined ? 0 : x.fileIndex - y.fileIndex || x.position - y.position;
  });
  const policies = ordered.map((id, order): PolicySource => {
    const where = firstSeen.get(id);
    const own = bySubject.get(id) ?? [];
    const subject = own[0]?.subject;
    const file = where?.file ?? '';
    if (subject === undefined || subject.termType !== 'NamedNode') {
      throw policyLoadError('a guard:Policy must be named by an IRI, not a blank node', file);
    }
    const relative = resolvedRelative.get(file);
    if (relative !== undefined && relative.size > 0) refuseFileRelative(subject.value, file, own, relative);
    return { iri: subject.value, file, order, ...validatePolicy(subject.value, file, own, prefixesOf.get(file) ?? NO_PREFIXES) };
  });
  return { policies, quads, origins };
}

/**
 * A source without `policies: true` contributes facts that rules join with declared policies;
 * a triple of its about a policy (`<policy> ex:forProject ...`) would change what the policy
 * grants, so it fails the load.
 */
function checkFactsAboutPolicies(
  facts: readonly FactInput[],
  fileCount: number,
  origins: readonly QuadOrigin[],
  quads: readonly Quad[],
  policyIds: ReadonlySet<string>,
): void {
  for (const [index, input] of facts.entries()) {
    if (input.policies) continue;
    const { origin, first, count } = origins[fileCount + index]!;
    for (let at = first; at < first + count; at += 1) {
      const { subject, predicate } = quads[at]!;
      if (policyIds.has(subject.id)) {
        throw policyLoadError(
          `states ${short(predicate.value)} about the policy ${describeTerm(subject)} (allow it with "policies": true)`,
          origin,
        );
      }
    }
  }
}

/** Refuses an IRI the planner could not splice safely (iriSpliceProblem), naming the term and the IRI. */
function checkSpliceable(term: string, iri: string, fail: (reason: string) => never): void {
  const problem = iriSpliceProblem(iri);
  if (problem !== undefined) fail(`${term} ${JSON.stringify(iri)} ${problem}`);
}

/** The terms whose IRI object names a graph, a predicate, a class or an agent the policy's grant depends on. */
const NAMING_TERMS: ReadonlySet<string> = new Set([
  guard.agent,
  guard.readGraph,
  guard.hidePath,
  guard.readPath,
  guard.rowClass,
  guard.rowData,
]);

/**
 * The IRIs that the relative IRI references of a policy file without @base resolve to (against
 * the file's path, as N3.js resolves them: each is resolved by the same parser). The file has
 * parsed already, so the lexer reads it whole.
 */
function relativeIrisOf(text: string, file: string): ReadonlySet<string> {
  const resolved = new Set<string>();
  for (const token of new Lexer().tokenize(text)) {
    if (token.type !== 'IRI' || token.value === undefined || hasScheme(token.value)) continue;
    const [quad] = new Parser({ format: 'text/turtle', baseIRI: pathToFileURL(file).href }).parse(`<urn:s> <urn:p> <${token.value}> .`);
    if (quad !== undefined) resolved.add(quad.object.value);
  }
  return resolved;
}

/**
 * Refuses a relative IRI among what a policy names, in a file without @base (`guard:readGraph
 * <g1>`): it resolved against the policy file's own path, which names no graph, predicate or
 * agent of a store; it loaded and granted nothing, while `check` said ok. A `file:` IRI written
 * in full (the W3C test data names its graphs so) is taken.
 */
function refuseFileRelative(iri: string, file: string, own: readonly Quad[], relative: ReadonlySet<string>): void {
  for (const { predicate, object } of own) {
    if (NAMING_TERMS.has(predicate.value) && object.termType === 'NamedNode' && relative.has(object.value)) {
      throw policyLoadError(
        `${short(predicate.value)} <${object.value}> is a relative IRI resolved against the policy file's path (write the IRI in full, or give the file an @base)`,
        file,
        iri,
      );
    }
  }
}

/** Checks one policy's own triples and returns its hidden paths, graph templates, graph prefixes and limits. */
function validatePolicy(
  iri: string,
  file: string,
  own: readonly Quad[],
  prefixes: FilePrefixes,
): { hidePaths: string[]; graphTemplates: string[]; graphPrefixes: string[]; limits: PolicyLimits; restriction: PolicyRestriction } {
  const fail = (reason: string): never => {
    throw policyLoadError(reason, file, iri);
  };
  const hidePaths: string[] = [];
  const graphTemplates: string[] = [];
  const graphPrefixes: string[] = [];
  let targeted = false;
  for (const { predicate, object } of own) {
    switch (predicate.value) {
      case guard.agent:
        if (object.termType !== 'NamedNode') fail(`guard:agent must be an IRI, found ${describeTerm(object)}`);
        targeted = true;
        break;
      case guard.group:
        if (object.termType !== 'Literal') fail(`guard:group must be a string literal, found ${describeTerm(object)}`);
        if (object.termType === 'Literal' && (object.datatype.value !== XSD_STRING || object.language !== '')) {
          fail(`guard:group must be a plain string literal, found ${describeTerm(object)}`);
        }
        if (object.value === '') fail('guard:group must not be the empty string');
        targeted = true;
        break;
      case guard.readGraph:
        if (object.termType !== 'NamedNode') fail(`guard:readGraph must be an IRI, found ${describeTerm(object)}`);
        if (isReservedIri(object.value)) fail(`guard:readGraph <${object.value}> is reserved by the rewriter (urn:x-sparql-guard:)`);
        checkSpliceable('guard:readGraph', object.value, fail);
        {
          const alias = storeAliasProblem(object.value);
          if (alias !== undefined) fail(`guard:readGraph <${object.value}> ${alias}`);
        }
        break;
      case guard.readGraphTemplate:
        if (object.termType !== 'Literal' || object.datatype.value !== XSD_STRING || object.language !== '') {
          fail(`guard:readGraphTemplate must be a plain string literal, found ${describeTerm(object)}`);
        }
        try {
          compileGraphTemplate(object.value);
        } catch (error) {
          fail(`guard:readGraphTemplate ${describeTerm(object)} ${(error as Error).message}`);
        }
        if (!graphTemplates.includes(object.value)) graphTemplates.push(object.value);
        break;
      case guard.readGraphPrefix: {
        // Text, not an IRI: a prefix names no resource, and Turtle would resolve a relative <acme/> against the file.
        if (object.termType !== 'Literal' || object.datatype.value !== XSD_STRING || object.language !== '') {
          fail(`guard:readGraphPrefix must be a plain string literal holding an absolute IRI, found ${describeTerm(object)}`);
        }
        const problem = graphPrefixProblem(object.value);
        if (problem !== undefined) fail(`guard:readGraphPrefix ${JSON.stringify(object.value)} ${problem}`);
        if (!graphPrefixes.includes(object.value)) graphPrefixes.push(object.value);
        break;
      }
      case guard.hidePath:
        if (object.termType !== 'NamedNode') fail(`guard:hidePath must be an IRI, found ${describeTerm(object)}`);
        if (isReservedIri(object.value)) fail(`guard:hidePath <${object.value}> is reserved by the rewriter (urn:x-sparql-guard:)`);
        checkSpliceable('guard:hidePath', object.value, fail);
        if (!hidePaths.includes(object.value)) hidePaths.push(object.value);
        break;
      default:
        break;
    }
  }
  if (!targeted) fail('has neither guard:agent nor guard:group');
  const restriction = readRowRule(own, prefixes, fail);
  return { hidePaths, graphTemplates, graphPrefixes, limits: readLimits(own, fail), restriction };
}

/** The policy's limits: each a positive xsd:integer, given at most once. */
function readLimits(own: readonly Quad[], fail: (reason: string) => never): PolicyLimits {
  const limits: Record<string, number> = {};
  for (const [predicate, member, name] of LIMIT_PREDICATES) {
    const values = own.filter((quad) => quad.predicate.value === predicate).map((quad) => quad.object);
    if (values.length === 0) continue;
    if (values.length > 1) fail(`${name} is given ${values.length} times (give one value)`);
    const object = values[0]!;
    const number =
      object.termType === 'Literal' && object.datatype.value === XSD_INTEGER && /^\+?\d{1,10}$/.test(object.value)
        ? Number(object.value)
        : Number.NaN;
    if (!(number >= 1 && number <= MAX_LIMIT)) fail(`${name} must be a whole number from 1 to ${MAX_LIMIT}, found ${describeTerm(object)}`);
    limits[member] = number;
  }
  return Object.freeze(limits);
}

/** The text of a policy file on disk, once settled; a PolicyLoadError naming the file when it cannot be read or is not UTF-8. */
export async function readPolicyText(file: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readSettledFile(file);
  } catch (error) {
    if (error instanceof FileUnsettledError) throw policyLoadError(`policy file ${error.message}`, file);
    const code = (error as NodeJS.ErrnoException).code ?? 'read error';
    throw policyLoadError(`policy file cannot be read (${code})`, file);
  }
  try {
    return decodeUtf8Text(bytes);
  } catch (error) {
    throw policyLoadError(`policy file is ${(error as NotUtf8Error).message}`, file);
  }
}

function parseTurtle(text: string, file: string, prefixes: { iris: Record<string, string>; ambiguous: Set<string> }): Quad[] {
  // Relative IRIs resolve against the file itself, as any Turtle tool would.
  const parser = new Parser({ format: 'text/turtle', baseIRI: pathToFileURL(file).href });
  try {
    return parser.parse(text, null, (prefix: string, iri: { value: string }) => {
      const before = prefixes.iris[prefix];
      if (prefixes.ambiguous.has(prefix) || (before !== undefined && before !== iri.value)) {
        prefixes.ambiguous.add(prefix);
        delete prefixes.iris[prefix];
      } else prefixes.iris[prefix] = iri.value;
    });
  } catch (error) {
    const { message } = error as Error;
    throw policyLoadError(`Turtle syntax error: ${message.replace(/\.$/, '')}`, file);
  }
}

function short(iri: string): string {
  return iri.startsWith(GUARD) ? `guard:${iri.slice(GUARD.length)}` : `<${iri}>`;
}
