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
    .map((range) => range.split(';'))
    .filter(([type = '']) => type.trim() !== '');
  // `*/*;q=0` accepts nothing (RFC 9110 section 12.4.2): passed on, the store answers it (406).
  if (ranges.length === 0 || ranges.every(([type = '', ...params]) => type.trim() === '*/*' && !refusesAll(params))) return formDefault;
  return callerAccept;
}

/** True when the parameters hold `q=0` (0, 0.0, 0.00, 0.000): the range is not acceptable. */
function refusesAll(params: readonly string[]): boolean {
  return params.some((param) => /^\s*q\s*=\s*0(\.0{0,3})?\s*$/i.test(param));
}
