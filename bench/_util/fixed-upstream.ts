// A fast stand-in SPARQL store for the benchmarks: answers every query with a fixed, valid SPARQL JSON result.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Rows of the answer to a query without LIMIT: a small result, as most real queries get. */
const SMALL_ROWS = 10;
/** Rows generated at a time for a large answer; one block is about 100 KB. */
const BLOCK_ROWS = 1_000;

/** One binding row; `i` varies so that rows are not all equal. */
function row(i: number): string {
  return `{"s":{"type":"uri","value":"https://bench.example.org/s${i}"},"o":{"type":"literal","value":"value number ${i} of the benchmark answer"}}`;
}

const HEAD = '{"head":{"vars":["s","o"]},"results":{"bindings":[';
const TAIL = ']}}\n';
const SMALL_ANSWER = HEAD + Array.from({ length: SMALL_ROWS }, (_, i) => row(i)).join(',') + TAIL;
const BLOCK = Buffer.from(Array.from({ length: BLOCK_ROWS }, (_, i) => `,${row(i)}`).join(''));

/** The first `rows` rows of a block, as text (kept: the benchmarks use a few LIMITs). */
const partBlocks = new Map<number, string>();
function partBlock(rows: number): string {
  let part = partBlocks.get(rows);
  if (part === undefined) {
    part = Array.from({ length: rows }, (_, i) => `,${row(i)}`).join('');
    partBlocks.set(rows, part);
  }
  return part;
}

/**
 * Answers a query: `LIMIT n` in it (n > SMALL_ROWS) streams n rows (and one more first), honouring backpressure,
 * so that the guard can be measured on a large answer; anything else gets the small answer.
 * The body is the same bytes for the same query, whoever asks: direct and proxied answers
 * can be compared.
 */
async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks).toString('utf8');
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  const query = request.method === 'POST' ? (new URLSearchParams(body).get('query') ?? body) : (url.searchParams.get('query') ?? '');
  response.setHeader('content-type', 'application/sparql-results+json');
  if (/^\s*ASK\b/i.test(query)) {
    // The guard's start-up check that dataset clauses are honoured: answer as a store whose
    // data sits only in named graphs the check does not name (`ASK {}` is true, any triple false).
    response.end(`{"head":{},"boolean":${/WHERE\s*\{\s*\}\s*$/i.test(query)}}\n`);
    return;
  }
  const limit = Number(/LIMIT\s+(\d+)/i.exec(query)?.[1] ?? 0);
  if (limit <= SMALL_ROWS) {
    response.end(SMALL_ANSWER);
    return;
  }
  // Whole blocks, then the rows left over: a LIMIT 20 is 21 rows, not a 1,000-row block.
  const blocks = Math.floor(limit / BLOCK_ROWS);
  response.write(HEAD + row(-1));
  for (let b = 0; b < blocks; b += 1) {
    if (!response.write(BLOCK)) await new Promise<void>((resume) => response.once('drain', resume));
    if (response.destroyed) return;
  }
  response.end(partBlock(limit % BLOCK_ROWS) + TAIL);
}

const server = createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
  answer(request, response).catch(() => response.destroy());
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
