// loadPolicySet for tests that load many sets: one policy worker for the whole test file, as a serving guard keeps
// one, where loadPolicySet alone starts a thread per load (about 0.15 s, most of a small load's time).

import { createPolicyWorker } from '../../src/policy/load/create-policy-worker.js';
import { loadPolicySetWithStats } from '../../src/policy/load/load-policy-set.js';
import type { PolicySetSources } from '../../src/policy/load/policy-set-sources.js';
import type { PolicySet } from '../../src/policy/policy-set.js';

/** The file's worker: its thread starts at the first load and never keeps the process alive between loads. */
const worker = createPolicyWorker();

/** loadPolicySet through the test file's one worker (the same load, queue and one-line errors). */
export async function loadPolicies(sources: PolicySetSources): Promise<PolicySet> {
  return (await loadPolicySetWithStats(sources, { worker })).set;
}
