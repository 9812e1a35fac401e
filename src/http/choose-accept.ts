// The Accept header sent to the store: the caller's, or the default of its query form (docs/design/http.md).

/**
 * The caller's Accept is passed on as it is; none, an empty one, or one that only
 * says `*\/*` becomes the form's default (JSON results, or Turtle for graphs).
 */
export function chooseAccept(callerAccept: string | undefined, formDefault: string): string {
  if (callerAccept === undefined) return formDefault;
  // The common case, one media range without parameters, without building arrays.
  if (!callerAccept.includes(',') && !callerAccept.includes(';')) {
    const range = callerAccept.trim();
    return range === '' || range === '*/*' ? formDefault : callerAccept;
  }
  const ranges = callerAccept
    .split(',')
    .map((range) => range.split(';')[0]?.trim() ?? '')
    .filter((range) => range !== '');
  if (ranges.length === 0 || ranges.every((range) => range === '*/*')) return formDefault;
  return callerAccept;
}
