// The stores the hidden-path tests run on: a salary predicate hidden from staff and visible to HR, in the HR fixture and in the lab's dataset, on the embedded store and every lab store that is up.

import { resolve } from 'node:path';
import { SECURITY_DATA } from './rig-stores.js';
import { sha256 } from './start-test-guard.js';

export const HIDDEN_PATHS_FIXTURES = 'test/fixtures/sparql/hidden-paths';

/** API keys of the hidden-path policies: staff (salary hidden), HR, and an auditor (staff's group, salary granted by agent). */
export const HIDDEN_SALARY_KEYS = {
  staff: 'test-key-hidden-staff-0123456789abcdef',
  hr: 'test-key-hidden-hr-0123456789abcdef',
  auditor: 'test-key-hidden-auditor-0123456789abcdef',
} as const;

export const HIDDEN_SALARY_API_KEYS = [
  { agent: 'http://example.org/agents/sam', groups: ['staff'], sha256: sha256(HIDDEN_SALARY_KEYS.staff) },
  { agent: 'http://example.org/agents/hana', groups: ['hr'], sha256: sha256(HIDDEN_SALARY_KEYS.hr) },
  { agent: 'http://example.org/agents/auditor', groups: ['staff'], sha256: sha256(HIDDEN_SALARY_KEYS.auditor) },
];

/** One store with data in which a salary predicate is hidden from staff and visible to HR, over the same graphs. */
export interface HiddenSalaryStore {
  readonly name: string;
  /** Why the scenario is skipped (a lab store that is not up), or false. */
  readonly skip?: string | false;
  /** Config merged over the test defaults: where the data is, which policies. */
  readonly config: Record<string, unknown>;
  readonly salary: string;
  /** A person with a salary (a node of visible triples), and the class of persons. */
  readonly person: string;
  readonly personClass: string;
  /** Any salary value written in an answer (they occur in no visible triple). */
  readonly salaryValue: RegExp;
  /** One salary value, a node of hidden triples only. */
  readonly hiddenNode: string;
  /** How many salary triples HR sees. */
  readonly salaryTriples: number;
  /** A label-like predicate of persons, for paths and negated sets. */
  readonly label: string;
  /** The graphs both callers ask for (as default and named graphs), so both answers come from the same dataset. */
  readonly graphs: readonly string[];
  /** The rig dataset: DESCRIBE must stay within the dataset (probes d02-d05). */
  readonly rig: boolean;
  /**
   * Virtuoso 7.2 finds nothing for the visible-node filter inside `GRAPH <g>` and answers a
   * zero-length path to a constant with one empty solution: there staff's answer must hold no
   * more than the redacted one (no leak), not exactly as much.
   */
  readonly deviating: boolean;
}

const HR_EX = 'http://example.org/ns#';
const HR_FIXTURE: HiddenSalaryStore = {
  name: 'embedded store, HR fixture',
  config: {
    policies: [resolve(HIDDEN_PATHS_FIXTURES, 'policies.ttl')],
    embedded: { data: [resolve(HIDDEN_PATHS_FIXTURES, 'data.trig')] },
  },
  salary: `${HR_EX}salary`,
  person: `${HR_EX}ann`,
  personClass: `${HR_EX}Person`,
  salaryValue: /71234|65432/,
  hiddenNode: '71234',
  salaryTriples: 3,
  label: `${HR_EX}name`,
  graphs: ['http://example.org/graphs/people'],
  rig: false,
  deviating: false,
};

const onRigData = (name: string, config: Record<string, unknown>): HiddenSalaryStore => ({
  name,
  config: { policies: [resolve(HIDDEN_PATHS_FIXTURES, 'rig-policies.ttl')], ...config },
  salary: 'http://example.org/salary',
  person: 'http://example.org/res/person1',
  personClass: 'http://example.org/Person',
  // res:person1..20 earn 51000..70000; no other number of that shape is in the granted graphs.
  salaryValue: /\b(?:5[1-9]|6\d|70)000\b/,
  hiddenNode: '51000',
  salaryTriples: 20,
  label: 'http://www.w3.org/2000/01/rdf-schema#label',
  graphs: ['http://example.org/g/teamA', 'http://example.org/g/secret'],
  rig: true,
  deviating: false,
});

const RIG_STORES: readonly (readonly [string, string])[] = [
  ['oxigraph', 'RIG_OXIGRAPH_QUERY'],
  ['jena', 'RIG_JENA_QUERY'],
  ['virtuoso', 'RIG_VIRTUOSO_QUERY'],
  ['jena-arq', 'RIG_JENA_ARQ_QUERY'],
  ['jena-mem', 'RIG_JENA_MEM_QUERY'],
];

/** The HR fixture and the rig dataset on the embedded store, then the rig dataset on each lab store (skipped when it is not up). */
export function hiddenSalaryStores(): HiddenSalaryStore[] {
  return [
    HR_FIXTURE,
    onRigData('embedded store, rig dataset', { embedded: { data: [SECURITY_DATA] } }),
    ...RIG_STORES.map(([name, variable]) => {
      const url = process.env[variable];
      return {
        ...onRigData(`rig ${name}`, { upstream: url }),
        deviating: name === 'virtuoso',
        skip: url ? (false as const) : `${variable} is not set (the store lab is not up)`,
      };
    }),
  ];
}
