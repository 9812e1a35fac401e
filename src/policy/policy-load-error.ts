// The error of a policy load that fails: the previous policy set stays active (thrown on the policy worker, rethrown on the serving thread).

/**
 * A policy or rule file that cannot be loaded. The message is one line that
 * names the file, the policy IRI when there is one, and the reason; it is
 * meant for the operator's log, never for a caller.
 */
export class PolicyLoadError extends Error {
  override readonly name = 'PolicyLoadError';
  readonly code = 'POLICY_LOAD';

  constructor(
    message: string,
    /** Absolute path of the policy or rule file at fault, when one is. */
    readonly file?: string,
    /** IRI of the policy at fault, when one is. */
    readonly policy?: string,
  ) {
    super(message.replace(/[\r\n]+/g, ' '));
  }
}

/** The one-line message format: `<file>: policy <iri>: <reason>` (parts left out when unknown). */
export function policyLoadError(reason: string, file?: string, policy?: string): PolicyLoadError {
  const where = [file, policy === undefined ? undefined : `policy <${policy}>`].filter((part) => part !== undefined);
  return new PolicyLoadError([...where, reason].join(': '), file, policy);
}
