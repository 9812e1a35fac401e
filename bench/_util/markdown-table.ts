// Markdown tables for the bench reports: a header with its alignment row, then one row per line as results come in.

/**
 * The header of a table and its delimiter row. `align` has one letter per column, `l` (text)
 * or `r` (figures); columns past its end are left-aligned.
 */
export function tableHeader(columns: readonly string[], align = ''): string {
  const delimiters = columns.map((_, i) => (align[i] === 'r' ? '---:' : '---'));
  return `${tableRow(columns)}\n${tableRow(delimiters)}`;
}

/** One row; a `|` inside a cell is escaped so that it stays in its cell. */
export function tableRow(cells: readonly (string | number)[]): string {
  return `| ${cells.map((cell) => String(cell).replace(/\|/g, '\\|')).join(' | ')} |`;
}
