// The messages between the serving thread and the policy worker, and the load statistics they carry: every type that crosses the worker boundary.

import type { PolicyLimits } from '../policy-set.js';
import type { PrincipalIndex } from '../principal-index.js';
import type { EngineChoice, EngineRun, RuleFileRun } from '../rules/reason-over-policies.js';
import type { PolicyRestriction } from './read-row-rule.js';

/** A load request from `loadPolicySet` to the worker. */
export interface WorkerJob {
  readonly id: number;
  readonly policyFiles: readonly string[];
  readonly ruleFiles: readonly string[];
  readonly engine: EngineChoice;
  /** The fact sources' answers, in the order of config `facts`. */
  readonly facts: readonly FactInput[];
  /** The digest of the set in force: a load that derives it again sends no table back. */
  readonly digestInForce?: string;
  /**
   * Texts of policy and rule files by path, used instead of reading those files: a scheduled
   * refresh passes the texts the set in force was loaded from (docs/design/server.md, "A schedule never reads the files").
   */
  readonly fileTexts?: FileTexts;
}

/** The text of each policy and rule file a load read, by the path it was listed under. */
export type FileTexts = ReadonlyMap<string, string>;

/** The answer: the policies with their derived principals and graphs, or the one-line failure. */
export type WorkerReply =
  | {
      readonly id: number;
      readonly ok: true;
      /** Undefined when the table's digest is the job's `digestInForce` (nothing to compile). */
      readonly policies: AttachedPolicies | undefined;
      /** sha256 of the attached table: equal digests, equal sets. */
      readonly digest: string;
      readonly stats: WorkerLoadStats;
      /** The texts this load read (or was given), for a later scheduled refresh. */
      readonly fileTexts: FileTexts;
    }
  | { readonly id: number; readonly ok: false; readonly message: string; readonly file?: string; readonly policy?: string };

/** One source's answer and its bounds, as the policy worker gets it. */
export interface FactInput {
  readonly name: string;
  readonly contentType: string;
  readonly body: Uint8Array;
  /** Time of the store read that fetched `body`, milliseconds (for LoadStats). */
  readonly fetchMs: number;
  readonly maxTriples: number;
  /** Config `policies`: whether the source may state policies. */
  readonly policies: boolean;
}

/** What a load cost, for logs and the benchmark. */
export interface LoadStats {
  readonly policyCount: number;
  /** Triples handed to EYE. */
  readonly eyeInputTriples: number;
  /** Reading, parsing and validating the Turtle, milliseconds. */
  readonly readMs: number;
  /** Inside EYE, milliseconds. */
  readonly eyeMs: number;
  /** Everything else in the worker (N3P, output parsing, checks of derived triples), milliseconds. */
  readonly otherMs: number;
  /** Building the table on the calling thread, milliseconds. */
  readonly compileMs: number;
  /** Per rule file, the engine that ran it (and why EYE, when EYE). */
  readonly ruleRuns: readonly RuleFileRun[];
  /** Per engine that ran: its files, time and input. */
  readonly stages: readonly EngineRun[];
  /** Lines about rules that cannot fire, derive what is ignored or refused, or cost the square of the policies. */
  readonly warnings: readonly string[];
  /** Size of the worker thread's V8 heap when the load finished, bytes. */
  readonly workerHeapBytes: number;
  /** Per fact source, in the order of config `facts`: triples read, bytes of the answer, time of the read. */
  readonly facts: readonly { readonly name: string; readonly triples: number; readonly bytes: number; readonly fetchMs: number }[];
  /** The listing of the store's graphs under the `guard:readGraphPrefix` values; absent when no policy has one. */
  readonly prefixListing?: { readonly prefixes: number; readonly graphs: number; readonly ms: number };
}

/** The part of LoadStats the worker measures: all but what the serving thread does after the reply. */
export type WorkerLoadStats = Omit<LoadStats, 'compileMs' | 'prefixListing'>;

/**
 * The policies with what the rules derived for them, as the worker sends them: in columns (a
 * policy is its index), each distinct principal and graph once, and per policy a range of
 * numbers into those tables (policy i's principals are `principals[principalIndexes[k]]` for k
 * from `principalStarts[i]` to `principalStarts[i + 1]`). The message is mostly typed arrays and
 * strings: the main thread unpacks no object per policy or principal.
 */
export interface AttachedPolicies {
  /** Policy IRIs, in order of listing. */
  readonly iris: readonly string[];
  /** Per policy, its position in order of listing (`CompiledPolicy.order`). */
  readonly orders: Int32Array;
  /** Each policy file once; policy i's is `files[fileIndexes[i]]`. */
  readonly files: readonly string[];
  readonly fileIndexes: Int32Array;
  /** Per policy, the predicates it hides (the policies hiding none share one empty array). */
  readonly hidePaths: readonly (readonly string[])[];
  /** Per policy, its `guard:readGraphTemplate` texts, validated (the policies with none share one empty array). */
  readonly graphTemplates: readonly (readonly string[])[];
  /** Per policy, its `guard:readGraphPrefix` values (the policies with none share one empty array). */
  readonly graphPrefixes: readonly (readonly string[])[];
  /** Per policy, its limits (the policies setting none share one empty object). */
  readonly limits: readonly PolicyLimits[];
  /** Per policy, its columns and row rule (the policies stating neither share one empty object). */
  readonly restrictions: readonly PolicyRestriction[];
  /** Each distinct principal once (its kind an index into `PRINCIPAL_KINDS`), with the policies naming it. */
  readonly principals: PrincipalIndex;
  readonly graphs: readonly string[];
  readonly principalStarts: Int32Array;
  readonly principalIndexes: Int32Array;
  readonly graphStarts: Int32Array;
  readonly graphIndexes: Int32Array;
}
