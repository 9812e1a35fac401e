// A valid query whose answer is longer than one JavaScript string: what the embedded store cannot send.

const numbers = (count: number): string => Array.from({ length: count }, (_, i) => i).join(' ');

/**
 * 9,000 rows (30 x 300 VALUES) of a 64 KiB literal, made by doubling a letter 16 times: about
 * 590 MB of JSON, past V8's longest string (512 MiB). Evaluating it takes the embedded store a
 * few seconds and about a gigabyte of memory.
 */
export const OVERSIZED_ANSWER = `SELECT ?s WHERE { VALUES ?a { ${numbers(30)} } VALUES ?b { ${numbers(300)} } BIND("x" AS ?x0) ${Array.from(
  { length: 16 },
  (_, i) => `BIND(CONCAT(?x${i}, ?x${i}) AS ?${i === 15 ? 's' : `x${i + 1}`})`,
).join(' ')} }`;
