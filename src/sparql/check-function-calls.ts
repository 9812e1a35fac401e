// Refuses function calls outside SPARQL 1.1 built-ins, XSD casts and the operator's allow-list, and known store property functions in predicate position.

import { GuardError } from '../guard-error.js';
import { PROPERTY_FUNCTION_NAMESPACES } from '../property-function-namespaces.js';
import { normaliseIri } from './resolve-iri.js';
import type { Term } from './tree-shapes.js';
import { walkQuery } from './walk-query.js';

const XSD = 'http://www.w3.org/2001/XMLSchema#';

/** The constructor functions of SPARQL 1.1 (§17.5); every other SPARQL function is a keyword (§17.4), an operator in sparqljs. */
const XSD_CASTS: ReadonlySet<string> = new Set(
  ['boolean', 'double', 'float', 'decimal', 'integer', 'dateTime', 'string'].map((name) => XSD + name),
);

/** The aggregates of SPARQL 1.1 (§18.5, [127] Aggregate), as sparqljs names them. */
const AGGREGATES: ReadonlySet<string> = new Set(['count', 'sum', 'min', 'max', 'avg', 'sample', 'group_concat']);

/**
 * The built-ins whose argument count sparqljs 3.7.4 does not hold to the grammar ([121] BuiltInCall,
 * [122] RegexExpression, [123] SubstringExpression, [124] StrReplaceExpression): it reads each with
 * an expression list. Lowest and highest count, by sparqljs's operator name.
 */
const LISTED_ARGUMENTS: ReadonlyMap<string, readonly [number, number]> = new Map([
  ['regex', [2, 3]],
  ['substr', [2, 3]],
  ['replace', [3, 4]],
]);

/** The config key allowedFunctions, compiled once per planner: exact IRIs, and namespaces (ending in `#` or `/`). */
export interface FunctionAllowList {
  readonly exact: ReadonlySet<string>;
  readonly prefixes: readonly string[];
}

/** The default: no extension function at all (fail closed). */
export const NO_EXTENSION_FUNCTIONS: FunctionAllowList = { exact: new Set(), prefixes: [] };

/** Compiles the allowedFunctions entries as the configuration checked them (docs/design/config.md). */
export function compileFunctionAllowList(entries: readonly string[]): FunctionAllowList {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  entries.forEach((entry) => {
    if (entry.endsWith('#') || entry.endsWith('/')) prefixes.push(entry);
    else exact.add(entry);
  });
  return { exact, prefixes };
}

/**
 * Throws GuardError 400 for a call of a function IRI other than an XSD cast or an entry of `allowed`
 * (stores run their extensions under such IRIs; a custom aggregate is a call too), for an aggregate
 * SPARQL 1.1 lacks, and for a store property function as a predicate or path member, whatever `allowed` holds;
 * 400 `parse` for REGEX, SUBSTR or REPLACE with a count of arguments the grammar does not give them.
 */
export function checkFunctionCalls(node: unknown, allowed: FunctionAllowList = NO_EXTENSION_FUNCTIONS): void {
  walkQuery(node, {
    enter(record) {
      if (record['type'] === 'functionCall') {
        const callee = record['function'] as { termType?: unknown; value?: unknown } | undefined;
        if (
          callee?.termType !== 'NamedNode' ||
          typeof callee.value !== 'string' ||
          !(XSD_CASTS.has(callee.value) || isAllowed(callee.value, allowed))
        ) {
          throw new GuardError(
            400,
            'function',
            'query calls a function that is not a SPARQL 1.1 built-in, an XSD cast or in allowedFunctions',
          );
        }
      } else if (record['type'] === 'operation' && LISTED_ARGUMENTS.has(String(record['operator']))) {
        const [lowest, highest] = LISTED_ARGUMENTS.get(String(record['operator']))!;
        const count = Array.isArray(record['args']) ? record['args'].length : -1;
        if (count < lowest || count > highest) {
          const name = String(record['operator']).toUpperCase();
          throw new GuardError(400, 'parse', `query is not valid SPARQL 1.1: ${name} takes ${lowest} or ${highest} arguments (§17.4)`);
        }
      } else if (record['type'] === 'aggregate' && !AGGREGATES.has(String(record['aggregation']).toLowerCase())) {
        throw new GuardError(400, 'function', 'query uses an aggregate that is not a SPARQL 1.1 aggregate');
      }
      // Paths stand only in predicate position; as a subject or object such an IRI is just a value.
      const predicates =
        record['type'] === 'path' ? record['items'] : 'predicate' in record && 'subject' in record ? [record['predicate']] : [];
      for (const term of Array.isArray(predicates) ? (predicates as (Partial<Term> | null)[]) : []) {
        if (term?.termType === 'NamedNode' && typeof term.value === 'string' && isPropertyFunction(term.value)) {
          throw new GuardError(400, 'function', 'query uses a store property function as a predicate');
        }
      }
    },
  });
}

/** An allow-listed function IRI, in its dot-segment-free form too (Jena reads that one); a denied namespace never passes. */
function isAllowed(iri: string, allowed: FunctionAllowList): boolean {
  if (allowed.exact.size === 0 && allowed.prefixes.length === 0) return false;
  const matches = (candidate: string): boolean =>
    allowed.exact.has(candidate) || allowed.prefixes.some((prefix) => candidate.startsWith(prefix));
  const normalised = normaliseIri(iri);
  return matches(iri) && (normalised === iri || matches(normalised)) && !isPropertyFunction(iri);
}

/** An IRI of a store property-function namespace, case-blind: schemes are (RFC 3986 3.1), and refusing a look-alike costs nothing. */
function isPropertyFunction(iri: string): boolean {
  const lower = iri.toLowerCase();
  return PROPERTY_FUNCTION_NAMESPACES.some((prefix) => lower.startsWith(prefix));
}
