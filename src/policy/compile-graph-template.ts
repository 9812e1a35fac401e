// Compiles a `guard:readGraphTemplate` (RFC 6570 simple expansion) and expands it for one caller; the one entry of url-template (checked on the policy worker, expanded on the serving thread).

import { parseTemplate } from 'url-template';
import { hasScheme, iriSpliceProblem, MAX_GRANTED_IRI_LENGTH, storeAliasProblem } from '../iri.js';
import { isReservedIri } from '../vocabulary.js';

/** The longest template, and the longest IRI an expansion may give, in characters: as for every granted IRI (MAX_GRANTED_IRI_LENGTH). */
export const MAX_TEMPLATE_IRI_LENGTH = MAX_GRANTED_IRI_LENGTH;

/** The longest claim name a template may name (`{claim.NAME}`). */
const MAX_CLAIM_NAME_LENGTH = 64;

/**
 * RFC 6570 section 2.3 varname (`varchar *( ["."] varchar )`) without pct-encoded
 * characters, restricted to the three variables the guard fills.
 */
const VARIABLE = /^(?:agent|group|claim\.([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*))$/;

/**
 * RFC 3986 section 2: the characters a template's literal text may hold (reserved,
 * unreserved and `%`). url-template writes literals through encodeURI; with these alone its
 * output is the literal as written, so the operator reads in the policy exactly the IRI the
 * store gets.
 */
const LITERAL = /^(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$/;

/** A character of the literal text that no encoded value holds (RFC 3986 gen-delims and sub-delims). */
const SEPARATOR = /[:/?#[\]@!$&'()*+,;=]/;

/** The values of one caller a template is expanded with. */
export interface TemplateValues {
  /** The agent IRI; undefined: the anonymous caller, for whom no template expands. */
  readonly agent: string | undefined;
  readonly groups: readonly string[];
  /** Top-level claims of a JWT caller: a string, or null for a claim that is present but not a string. */
  readonly claims: ReadonlyMap<string, string | null> | undefined;
}

/** A validated graph template. */
export interface GraphTemplate {
  /** The template as written in the policy. */
  readonly text: string;
  /** The claim names it reads (`{claim.NAME}`), each once. */
  readonly claims: readonly string[];
  /**
   * The graph IRIs of one caller: none when a variable has no value (no agent, no
   * group, a missing or empty claim), one per group when it reads `{group}`. Throws
   * TemplateValueError when a value is not a string or cannot be encoded, or when the
   * IRI it gives is not one a policy could grant.
   */
  expand(values: TemplateValues): string[];
}

/** Why a caller's identity cannot fill a template; the message names the variable, never its value. */
export class TemplateValueError extends Error {
  override readonly name = 'TemplateValueError';
}

/**
 * Validates `text` and compiles it. Only simple expansion `{name}` of one variable per
 * expression is accepted: the operators `+ # . / ; ? &` and the modifiers `:n` and `*`
 * would let a value's `/`, `?` or `#` through, or cut it. The literal text must hold only
 * URI characters and begin with a scheme; an expansion with sample values must be an IRI a
 * policy could grant. Throws an Error whose message is the reason, in one line.
 */
export function compileGraphTemplate(text: string): GraphTemplate {
  if (text.length > MAX_TEMPLATE_IRI_LENGTH) throw new Error(`is longer than ${MAX_TEMPLATE_IRI_LENGTH} characters`);
  const variables: string[] = [];
  const literals: string[] = [];
  let rest = text;
  for (;;) {
    const open = rest.indexOf('{');
    const literal = open < 0 ? rest : rest.slice(0, open);
    if (literal.includes('}')) throw new Error('has a } without its {');
    if (!LITERAL.test(literal)) {
      throw new Error('holds a character outside an expression that is not a URI character (write it percent-encoded)');
    }
    literals.push(literal);
    if (open < 0) break;
    const close = rest.indexOf('}', open);
    if (close < 0) throw new Error('has a { without its }');
    const expression = rest.slice(open + 1, close);
    if (!VARIABLE.test(expression)) {
      throw new Error(
        `has the expression {${expression.slice(0, 40)}}: only {agent}, {group} and {claim.NAME} are allowed, one per pair of braces, without operator or modifier`,
      );
    }
    if (expression.length > 'claim.'.length + MAX_CLAIM_NAME_LENGTH)
      throw new Error(`names a claim longer than ${MAX_CLAIM_NAME_LENGTH} characters`);
    variables.push(expression);
    rest = rest.slice(close + 1);
  }
  if (variables.length === 0) throw new Error('has no {variable} (a fixed graph is granted with guard:readGraph)');
  // Values are encoded all but A-Z a-z 0-9 - . _ ~, so only a reserved character of the literal
  // text tells where one value ends: `{agent}{group}` gave agent .../a with group bc the graph of
  // agent .../ab with group c (and a %-escape is no separator: a value's / is written %2F too).
  for (const [at, literal] of literals.entries()) {
    if (at === 0 || at === literals.length - 1 || SEPARATOR.test(literal)) continue;
    throw new Error(
      `has {${variables[at - 1]}} and {${variables[at]}} with no reserved character between them, so two callers' values could give one IRI (put a / between them)`,
    );
  }
  if (!hasScheme(literals[0] ?? '')) throw new Error('must begin with a scheme such as https: before its first {variable}');

  const template = parseTemplate(text);
  // The library writes each literal as it stands: check that on a sample, and that the sample is grantable.
  const sample = Object.fromEntries(variables.map((name) => [name, 'x']));
  const expected = literals.reduce((sofar, literal, at) => sofar + (at === 0 ? '' : 'x') + literal, '');
  const expanded = template.expand(sample);
  if (expanded !== expected) throw new Error('does not expand to its own literal text (check its percent-encoding)');
  const problem = grantProblem(expanded);
  if (problem !== undefined) throw new Error(`expands to an IRI that ${problem}`);

  const distinct = [...new Set(variables)];
  const claims = distinct.filter((name) => name.startsWith('claim.')).map((name) => name.slice('claim.'.length));
  const readsGroup = distinct.includes('group');
  return Object.freeze({
    text,
    claims: Object.freeze(claims),
    expand(values: TemplateValues): string[] {
      if (values.agent === undefined) return [];
      const context: Record<string, string> = { agent: values.agent };
      for (const name of claims) {
        const value = values.claims?.get(name);
        if (value === null) throw new TemplateValueError(`the token's ${name} claim, which a graph template reads, is not a string`);
        // A missing claim, or an empty one, names no graph: the template then grants nothing.
        if (value === undefined || value === '') return [];
        context[`claim.${name}`] = value;
      }
      if (!readsGroup) return [expandOne(template, context)];
      const graphs: string[] = [];
      for (const group of values.groups) graphs.push(expandOne(template, { ...context, group }));
      return graphs;
    },
  });
}

/** One expansion, checked as a written graph is; refusals name no value. */
function expandOne(template: ReturnType<typeof parseTemplate>, context: Record<string, string>): string {
  let iri: string;
  try {
    iri = template.expand(context);
  } catch {
    // encodeURIComponent refuses an unpaired surrogate, which no IRI can hold.
    throw new TemplateValueError("the caller's identity holds a character a graph template cannot encode into an IRI");
  }
  if (iri.length > MAX_TEMPLATE_IRI_LENGTH) {
    throw new TemplateValueError(`a graph template gives this caller an IRI longer than ${MAX_TEMPLATE_IRI_LENGTH} characters`);
  }
  const problem = grantProblem(iri);
  if (problem !== undefined) throw new TemplateValueError(`a graph template gives this caller an IRI that ${problem}`);
  return iri;
}

/** Why `iri` may not be granted, as for guard:readGraph (read-policy-files.ts), or undefined. */
function grantProblem(iri: string): string | undefined {
  if (isReservedIri(iri)) return 'is reserved by the rewriter (urn:x-sparql-guard:)';
  return iriSpliceProblem(iri) ?? storeAliasProblem(iri);
}

/** Whether `template` gives `graph` to the caller of `values`; a value that cannot fill it gives nothing (no throw). */
export function templateGives(template: GraphTemplate, values: TemplateValues, graph: string): boolean {
  try {
    return template.expand(values).includes(graph);
  } catch {
    return false;
  }
}
