// Writes, per request, the filter that keeps a zero-length path's end to the nodes of the caller's view under row rules.

import type { ZeroLengthSlot } from './prepared-query.js';
import { writeRowFilter, type RowCheckForm, type RowContext, type RowValues } from './write-row-filter.js';
import { existsFilter } from './exists-test.js';

/**
 * A path that can match zero steps binds its ends to any node of the active graph (SPARQL 1.1 §18.5,
 * ZeroLengthPath); over the view that is a node of a triple of the view: `end` must be the subject or the
 * object of a triple the row filter keeps (docs/policies.md, "Rows and columns"). The steps themselves are
 * checked elsewhere (their predicates must be columns of a policy without a row rule).
 */
export function writeZeroLengthRowFilter(
  slot: ZeroLengthSlot,
  end: string,
  context: RowContext,
  values: RowValues | undefined,
  form: RowCheckForm,
): string {
  const { subject, predicate, object, prefix } = slot;
  const from = writeRowFilter([{ subject: end, predicate, iri: undefined, object }], context, values, prefix, form);
  const to = writeRowFilter([{ subject, predicate, iri: undefined, object: end }], context, values, prefix, form);
  return existsFilter(`{ { ${end} ${predicate} ${object}${from} } UNION { ${subject} ${predicate} ${end}${to} } }`);
}
