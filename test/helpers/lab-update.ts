// Writing to a lab store: a SPARQL Update over HTTP, or through isql for Virtuoso (the lab takes no update on its /sparql). Shared by the tests and the benches.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import sparqljs from 'sparqljs';

/** A lab store by its rig name (oxigraph, jena, virtuoso, ...) and query URL. */
export interface LabStoreRef {
  readonly name: string;
  readonly queryUrl: string | undefined;
}

/** The update endpoint of a lab store, by the variable up.sh writes; undefined for Virtuoso (its SQL port) and the embedded store. */
function updateUrlOf(store: LabStoreRef): string | undefined {
  const variable = {
    oxigraph: 'RIG_OXIGRAPH_UPDATE',
    jena: 'RIG_JENA_UPDATE',
    'jena-arq': 'RIG_JENA_ARQ_UPDATE',
    'jena-mem': 'RIG_JENA_MEM_UPDATE',
    'jena-union': 'RIG_JENA_UNION_UPDATE',
  }[store.name];
  return variable === undefined ? undefined : process.env[variable] || undefined;
}

/** Runs a SPARQL Update on a lab store: over HTTP, or through isql for Virtuoso (the lab takes no update on its /sparql). */
export async function updateLabStore(store: LabStoreRef, text: string): Promise<void> {
  const url = updateUrlOf(store);
  if (url !== undefined) {
    const send = () => fetch(url, { method: 'POST', headers: { 'content-type': 'application/sparql-update' }, body: text });
    const response = await send().catch(send);
    assert.ok(response.status < 300, `update on ${store.name}: ${response.status} ${await response.text()}`);
    return;
  }
  assert.equal(store.name, 'virtuoso', `no update endpoint for ${store.name}`);
  const port = Number(new URL(store.queryUrl ?? '').port) + 10;
  const isql = spawn('isql-vt', [`127.0.0.1:${port}`, 'dba', 'dba'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  isql.stdout.on('data', (chunk: Buffer) => (output += String(chunk)));
  isql.stderr.on('data', (chunk: Buffer) => (output += String(chunk)));
  const statements = isqlStatementsOf(text);
  isql.stdin.end(statements);
  const [code] = (await once(isql, 'exit')) as [number];
  // isql prompts "Type the rest" for each chunk of a long line too: each statement must report its time ("-- 25 msec.").
  const finished = output.match(/-- \d+ msec\./g)?.length ?? 0;
  assert.ok(
    code === 0 && !/\*\*\* Error|ERROR:/.test(output) && finished === statements.split('\n').length - 1,
    `update through isql: ${output.split('\n').find((line) => /error/i.test(line)) ?? `${finished} statements finished, code ${code}`}`,
  );
}

/**
 * An update request as isql statements, one `SPARQL` line per operation, each with the request's
 * prologue: isql ends a statement at a `;` outside braces, so `op1 ; op2` would reach Virtuoso as
 * SPARQL then SQL (SQ074). A single operation goes as written; several are split by sparqljs.
 */
export function isqlStatementsOf(text: string): string {
  const request = new sparqljs.Parser().parse(text);
  const operations =
    request.type === 'update' && request.updates.length > 1
      ? request.updates.map((operation) =>
          new sparqljs.Generator().stringify({ type: 'update', base: request.base, prefixes: request.prefixes, updates: [operation] }),
        )
      : [text];
  return operations.map((operation) => `SPARQL ${operation.replaceAll('\n', ' ')};\n`).join('');
}
