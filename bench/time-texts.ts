// Times query texts by hand against one SPARQL endpoint: the texts that `rows-cost.ts` (BENCH_ROWS_TEXTS) and
// `dataset-clause-cost.ts` (--write-texts) write, or any of your own, sent in turn, N rounds, p50 per text.
//
//   node dist/bench/time-texts.js <endpoint> <rounds> [--absent] <file.rq>...
//
// A text's first line may be `# dataset: <iri>` (sent as default-graph-uri) or `# dataset: as written`.
// `--absent` sends each text with every graph it names (FROM, FROM NAMED, GRAPH, the dataset line) replaced
// by a graph the store does not hold: what is left is the store's cost of reading and planning the text,
// with (almost) nothing to evaluate (bench/notes/2026-11-28-rows-cost-5.md).

import { readFileSync } from 'node:fs';
import { percentile } from './_util/percentile.js';

const USAGE = 'usage: time-texts <endpoint> <rounds> [--absent] <file.rq>...';

interface Text {
  readonly file: string;
  readonly query: string;
  readonly dataset: string | undefined;
}

/** The text of `file`, its dataset line taken off, with its graphs moved out of the store's reach when `absent`. */
function readText(file: string, absent: boolean): Text {
  const raw = readFileSync(file, 'utf8');
  const line = /^# dataset: (.*)\n/.exec(raw);
  let query = raw.replace(/^# dataset:.*\n/, '');
  let dataset = line !== null && line[1] !== 'as written' ? line[1] : undefined;
  if (absent) {
    const moved = new Map<string, string>();
    const away = (iri: string): string => {
      if (!moved.has(iri)) moved.set(iri, `urn:sparql-guard:absent:${moved.size}`);
      return moved.get(iri) as string;
    };
    query = query.replace(
      /\b(FROM NAMED|FROM|GRAPH)(\s+)<([^>]*)>/gi,
      (_all, keyword: string, space: string, iri: string) => `${keyword}${space}<${away(iri)}>`,
    );
    if (dataset !== undefined) dataset = away(dataset);
  }
  return { file, query, dataset };
}

async function timeOnce(endpoint: string, text: Text): Promise<{ ms: number; rows: number }> {
  const body = new URLSearchParams({ query: text.query });
  if (text.dataset !== undefined) body.append('default-graph-uri', text.dataset);
  const start = performance.now();
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/sparql-results+json' },
    body,
  });
  const answer = await response.text();
  const ms = performance.now() - start;
  if (response.status !== 200) throw new Error(`${text.file}: ${response.status} ${answer.slice(0, 200).replace(/\s+/g, ' ')}`);
  const parsed = JSON.parse(answer) as { results?: { bindings?: unknown[] }; boolean?: boolean };
  return { ms, rows: parsed.results?.bindings?.length ?? (parsed.boolean === true ? 1 : 0) };
}

async function main(argv: readonly string[]): Promise<void> {
  const absent = argv.includes('--absent');
  const [endpoint, rounds, ...files] = argv.filter((argument) => argument !== '--absent');
  const n = Number(rounds);
  if (endpoint === undefined || !Number.isInteger(n) || n < 1 || files.length === 0) throw new Error(USAGE);
  const texts = files.map((file) => readText(file, absent));
  const times = texts.map((): number[] => []);
  const rows = texts.map(() => 0);
  // One checked round first (answers warm the store), then the texts in turn, so drift hits them alike.
  for (let round = 0; round <= n; round++)
    for (const [index, text] of texts.entries()) {
      const { ms, rows: count } = await timeOnce(endpoint, text);
      rows[index] = count;
      if (round > 0) times[index]?.push(ms);
    }
  const width = Math.max(...files.map((file) => file.length));
  for (const [index, text] of texts.entries())
    console.log(
      `${text.file.padEnd(width)}  p50 ${percentile(
        [...(times[index] ?? [])].sort((a, b) => a - b),
        50,
      )
        .toFixed(2)
        .padStart(8)} ms  rows ${rows[index]}`,
    );
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`time-texts: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
