// The first line of an error's message: what the embedded store reports and logs of a foreign error.

/** The first line of `error`'s message (or of its string form when it is no Error). */
export function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split(/\r?\n/, 1)[0] ?? '';
}
