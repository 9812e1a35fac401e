// Audit records: one JSON line per request on the query and explain paths, naming who asked, what ran over which graphs, and which policies decided (docs/audit.md).

import { createHash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import type { FastifyRequest } from 'fastify';
import type { GuardConfig } from '../config/read-config.js';
import type { PoliciesInForce, RequestOutcome } from '../http/request-state.js';
import type { Caller } from '../auth/caller.js';
import { templateGives, type TemplateValues } from '../policy/compile-graph-template.js';
import { restrictionsIn, type GraphRestriction } from '../policy/grant.js';
import type { Grant } from '../policy/policy-set.js';
import type { CompiledPolicy, PolicySet } from '../policy/policy-set.js';
import type { PlanDataset } from '../sparql/plan.js';
import { createLogWriter, DEFAULT_LOG_WRITER_OPTIONS, type LogLine, type LogWriter } from './create-log-writer.js';

/** The audit settings of the configuration (config `audit`). */
export type AuditSettings = NonNullable<GuardConfig['audit']>;

/** The version of the record format, the first field after `time`; a change that breaks a reader raises it (docs/audit.md). */
export const AUDIT_FORMAT = 1;

/** How a request ended, as the request log tells it. */
export interface RequestEnd {
  readonly status: number;
  readonly outcome: RequestOutcome;
  /** Bytes written to the client for this request, headers included. */
  readonly bytes: number;
  readonly code: string | undefined;
  /** No status was sent (the client left, or the shutdown cut, first): `status` is 499 or 444. */
  readonly unsent?: boolean;
}

/** The audit log of one guard process. */
export interface AuditLog {
  /** Writes the record of a request that ended; requests off the query and explain paths get none. */
  record(request: FastifyRequest, end: RequestEnd): void;
  /** Closes the file and opens its path again (after a rotation); on failure the open file stays and a line is logged. */
  reopen(): void;
  /** Writes what is buffered and closes the file. */
  close(): void;
}

/** Where the records go: a file opened in append mode, or the process's standard output writer. */
export interface AuditOutput {
  /** Writes one line built already (the JSON text of an object without `time`) to standard output, batched with the log. */
  readonly stdout: (fields: string) => void;
  /** Flushes standard output's batch. */
  readonly flushStdout: () => void;
  /** Event lines (open and write failures). */
  readonly log: LogLine;
}

/**
 * Batches for the file: up to 64 KiB per write. An append to a regular file is one write under
 * the file's lock, so workers sharing the file never split each other's lines at any size (the
 * 4096-byte bound of the log is for pipes); fewer, larger writes cost less system time.
 */
const FILE_BATCH = { ...DEFAULT_LOG_WRITER_OPTIONS, maxBatchBytes: 64 * 1024 };

/** Shapes remembered with their digest: the query texts of a busy guard come in few shapes. */
const MAX_SHAPES = 4096;

/**
 * Opens the audit output (the file in append mode, created with mode 0640; the start fails
 * with one line when it cannot be opened) and returns the log. Records are batched (at most
 * 20 ms, FILE_BATCH bytes for a file, one write per batch); a file is written with synchronous
 * appends, so a line is never split between workers appending to the same file.
 */
export function createAuditLog(settings: AuditSettings, output: AuditOutput): AuditLog {
  const { file } = settings;
  let fd: number | undefined;
  let writer: Pick<LogWriter, 'logText' | 'flush'>;
  let failing = false;
  if (file === '-') {
    writer = { logText: output.stdout, flush: output.flushStdout };
  } else {
    fd = openAudit(file);
    writer = createLogWriter((text) => {
      try {
        writeSync(fd!, text);
        failing = false;
      } catch (error) {
        // Logged once per run of failures (a full disk fails every batch); the guard keeps serving.
        if (!failing) output.log({ event: 'audit-write-failed', file, error: (error as NodeJS.ErrnoException).code ?? String(error) });
        failing = true;
      }
    }, FILE_BATCH);
  }
  const describe = createRecordWriter(settings);

  return {
    record(request, end) {
      if (request.operation === undefined) return;
      writer.logText(describe(request, end));
    },
    reopen() {
      if (fd === undefined) return;
      writer.flush();
      let next: number;
      try {
        next = openAudit(file);
      } catch (error) {
        output.log({ event: 'audit-reopen-failed', file, error: (error as Error).message });
        return;
      }
      closeSync(fd);
      fd = next;
      output.log({ event: 'audit-reopened', file });
    },
    close() {
      writer.flush();
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}

function openAudit(file: string): number {
  try {
    return openSync(file, 'a', 0o640);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    // The fix for the cause: "create its folder" told an operator whose audit.file named a folder to create it.
    const fix =
      code === 'EISDIR'
        ? 'it is a folder: give audit.file the path of a file in it'
        : code === 'ENOENT'
          ? 'create its folder'
          : code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
            ? "let the guard's user write there"
            : "create its folder and let the guard's user write there";
    throw new Error(`audit file ${file}: cannot be opened for appending (${code}) (${fix})`, { cause: error });
  }
}

/**
 * The function that writes a record's JSON text. What depends only on the grant or the plan's
 * dataset (the lists, the per-graph table) is written once per such object and remembered:
 * a grant's dataset arrays are shared by all its plans that name no dataset of their own.
 */
function createRecordWriter(settings: AuditSettings): (request: FastifyRequest, end: RequestEnd) => string {
  const maxListed = settings.fullLists ? Number.POSITIVE_INFINITY : settings.maxListed;
  const lists = new WeakMap<readonly string[], string>();
  const tables = new WeakMap<PlanDataset, string>();
  const shapes = new Map<string, string>();
  const policiesBySet = new WeakMap<PolicySet, Map<string, CompiledPolicy>>();

  /** A list as JSON: the IRIs, or past maxListed `{"count":n,"sha256":hex}` of the sorted list, one IRI per line. */
  const listOf = (iris: readonly string[]): string => {
    let text = lists.get(iris);
    if (text === undefined) {
      text = iris.length <= maxListed ? JSON.stringify(iris) : `{"count":${iris.length},"sha256":"${digestOf(iris)}"}`;
      lists.set(iris, text);
    }
    return text;
  };

  const shapeOf = (shape: string | undefined): string => {
    if (shape === undefined) return 'null';
    let digest = shapes.get(shape);
    if (digest === undefined) {
      if (shapes.size >= MAX_SHAPES) shapes.clear();
      digest = `"${createHash('sha256').update(shape).digest('hex').slice(0, 16)}"`;
      shapes.set(shape, digest);
    }
    return digest;
  };

  const policyOf = (set: PolicySet, iri: string): CompiledPolicy | undefined => {
    let byIri = policiesBySet.get(set);
    if (byIri === undefined) {
      byIri = new Map(set.policies.map((policy) => [policy.iri, policy]));
      policiesBySet.set(set, byIri);
    }
    return byIri.get(iri);
  };

  /**
   * Per graph of the dataset: the policies that granted it (in order of listing) and the
   * restrictions that applied there, as `"graphs":{...}`; '' past maxListed graphs.
   */
  /** `,"dataset":{...}` and the per-graph table, remembered per dataset object (each belongs to one grant). */
  const datasetOf = (dataset: PlanDataset, grant: Grant, set: PolicySet, caller: Caller): string => {
    let text = tables.get(dataset);
    if (text === undefined) {
      text = `,"dataset":{"default":${listOf(dataset.default)},"named":${listOf(dataset.named)}}${tableOf(dataset, grant, set, caller)}`;
      tables.set(dataset, text);
    }
    return text;
  };
  const callers = new WeakMap<Caller, string>();
  /** `,"agent":…,"via":…,"groups":…`, remembered per caller object (identification hands out shared ones). */
  const callerOf = (caller: Caller): string => {
    let text = callers.get(caller);
    if (text === undefined) {
      const via = caller.via ?? (caller.authenticated ? 'unknown' : 'anonymous');
      text = `,"agent":${JSON.stringify(caller.agent)},"via":"${via}","groups":${JSON.stringify(caller.groups)}`;
      callers.set(caller, text);
    }
    return text;
  };
  const versions = new WeakMap<PoliciesInForce, string>();
  const versionOf = (inForce: PoliciesInForce): string => {
    let text = versions.get(inForce);
    if (text === undefined) {
      text = `,"policyDigest":"${inForce.policyDigest}","factsGeneration":${inForce.factsGeneration}`;
      versions.set(inForce, text);
    }
    return text;
  };

  const tableOf = (dataset: PlanDataset, grant: Grant, set: PolicySet, caller: Caller): string => {
    let text: string;
    const graphs = new Set([...dataset.default, ...dataset.named]);
    if (graphs.size > maxListed) {
      text = '';
    } else {
      const policies = grant.policies.map((iri) => policyOf(set, iri));
      const table: Record<string, { grantedBy: string[]; rowDataOf?: string[]; restrictions: GraphRestriction[] }> = {};
      for (const graph of graphs) {
        const rowDataOf = rowDataReaders(graph, grant);
        table[graph] = {
          grantedBy: grantersOf(graph, grant, policies, caller),
          ...(rowDataOf.length > 0 && { rowDataOf }),
          restrictions: restrictionsIn(grant, graph),
        };
      }
      text = `,"graphs":${JSON.stringify(table)}`;
    }
    return text;
  };

  return (request, end) => {
    const { caller, grant, plan } = request;
    const inForce = request.policiesInForce;
    let text = `{"audit":${AUDIT_FORMAT},"requestId":${JSON.stringify(request.requestId)},"traceId":"${request.trace.traceId}"`;
    text += `,"operation":"${request.operation}"`;
    // A request refused before its grant still names a caller whose credentials are valid (as its log line does).
    if (caller === undefined)
      text += `,"agent":${request.agent === undefined ? 'null' : JSON.stringify(request.agent)},"via":null,"groups":null`;
    else text += callerOf(caller);
    text += `,"form":${plan === undefined ? 'null' : `"${plan.form}"`}`;
    // What the guard decided; how the answer then ended is `outcome`.
    // A query the guard forwarded whose client got nothing (499, 444) was still allowed: the store ran it. One whose
    // client left before it was sent (while the store's dataset check or the caller's token was awaited) read nothing.
    const decision =
      end.unsent === true && request.forwardedAt !== undefined
        ? 'allowed'
        : end.status >= 500
          ? 'failed'
          : end.status >= 400
            ? 'refused'
            : 'allowed';
    text += `,"decision":"${decision}","code":${end.code === undefined ? 'null' : JSON.stringify(end.code)},"status":${end.status},"outcome":"${end.outcome}"`;
    text += `,"policies":${grant === undefined ? 'null' : listOf(grant.policies)}`;
    if (plan === undefined || grant === undefined || inForce === undefined || caller === undefined) text += ',"dataset":null';
    else text += datasetOf(plan.dataset, grant, inForce.set, caller);
    text += inForce === undefined ? ',"policyDigest":null,"factsGeneration":null' : versionOf(inForce);
    text += `,"shape":${shapeOf(plan?.shape)},"bytes":${end.bytes},"limitedTo":${plan?.limitedTo ?? 'null'}`;
    const totalMs = Math.round((performance.now() - request.startedAt) * 100) / 100;
    // Sent, and no response headers came (a time-out, a reset, the client gone): the time the store had it, since null
    // says nothing was sent.
    const forwardedMs = request.forwardedAt === undefined ? undefined : performance.now() - request.forwardedAt;
    const store = request.storeMs ?? forwardedMs;
    const storeMs = store === undefined ? 'null' : String(Math.round(store * 100) / 100);
    text += `,"durationMs":{"total":${totalMs},"store":${storeMs}}`;
    if (settings.queryText) text += `,"query":${JSON.stringify(queryTextOf(request))}`;
    return `${text}}`;
  };
}

const graphSets = new WeakMap<CompiledPolicy, ReadonlySet<string>>();

/** The policy's own graphs (by name and by prefix) as a set, made when first asked. */
function graphSetOf(policy: CompiledPolicy): ReadonlySet<string> {
  let graphs = graphSets.get(policy);
  if (graphs === undefined) graphSets.set(policy, (graphs = new Set(policy.graphs)));
  return graphs;
}

/** The policies of the grant that grant `graph`: by name, by prefix, or by a template this caller filled. */
function grantersOf(graph: string, grant: Grant, policies: readonly (CompiledPolicy | undefined)[], caller: Caller): string[] {
  const granters: string[] = [];
  const fromTemplate = grant.templateGraphs?.includes(graph) === true;
  const values: TemplateValues = { agent: caller.authenticated ? caller.agent : undefined, groups: caller.groups, claims: caller.claims };
  for (const policy of policies) {
    if (policy === undefined) continue;
    const byTemplate = fromTemplate && policy.graphTemplates.some((template) => templateGives(template, values, graph));
    if (byTemplate || graphSetOf(policy).has(graph)) granters.push(policy.iri);
  }
  return granters;
}

/**
 * The policies whose row rule reads `graph` as its `guard:rowData` in this grant, in order of listing: the forwarded
 * query names such a graph in FROM NAMED although the caller's own patterns never read it (docs/audit.md).
 */
function rowDataReaders(graph: string, grant: Grant): string[] {
  const readers = new Set<string>();
  for (const view of grant.views?.values() ?? []) for (const row of view.rows) if (row.rule.data.includes(graph)) readers.add(row.policy);
  return grant.policies.filter((iri) => readers.has(iri));
}

/**
 * sha256 of the IRIs sorted by their UTF-8 bytes (code point order: `LC_ALL=C sort`), each followed by a line feed.
 * JavaScript's own sort compares UTF-16 code units, which put an IRI with a character past U+FFFF before one with
 * U+F900 to U+FFEF (both allowed in IRIs), so the digest of docs/audit.md's command differed.
 */
export function digestOf(iris: readonly string[]): string {
  const hash = createHash('sha256');
  const lines = iris.map((iri) => Buffer.from(`${iri}\n`));
  for (const line of lines.sort(Buffer.compare)) hash.update(line);
  return hash.digest('hex');
}

/** The query text the caller sent (config `audit.queryText`): the form field, the URL parameter or the body. */
function queryTextOf(request: FastifyRequest): string | null {
  const body = Buffer.isBuffer(request.body) ? request.body.toString('utf8') : '';
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (request.method === 'POST' && type === 'application/sparql-query') return body;
  const search = request.url.indexOf('?') < 0 ? '' : request.url.slice(request.url.indexOf('?') + 1);
  const params = new URLSearchParams(request.method === 'POST' && type === 'application/x-www-form-urlencoded' ? body : search);
  return params.get('query');
}
