// The Kubernetes manifests and the compose file speak the product's language: ports, probe paths, environment names and config keys.

import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { readConfig, type GuardConfig } from '../../src/config/read-config.js';
import { loadPolicySet } from '../../src/policy/load/load-policy-set.js';
import { policySetSources } from '../../src/policy/load/policy-set-sources.js';

const KUBERNETES = resolve('deploy/kubernetes');
const COMPOSE = resolve('deploy/compose');

// The manifests are data: read loosely, checked by assertion.
type Node = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function readYaml(file: string): Node[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((document) => {
    assert.deepEqual(document.errors, [], `${file} is valid YAML`);
    return document.toJS() as Node;
  });
}

/** Reads `guard.json` (and its sibling files) with the product's own reader, from a scratch folder, with `env`. */
function readProductConfig(files: Record<string, string>, env: Record<string, string>): { config: GuardConfig; folder: string } {
  const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-manifest-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);
  return { config: readConfig({ ...env, GUARD_CONFIG: join(folder, 'guard.json') }), folder };
}

describe('deploy/kubernetes', () => {
  const documents = readdirSync(KUBERNETES)
    .filter((name) => name.endsWith('.yaml'))
    .flatMap((name) => readYaml(join(KUBERNETES, name)));
  const byKind = (kind: string): Node => {
    const found = documents.filter((document) => document.kind === kind);
    assert.equal(found.length, 1, `one ${kind}`);
    return found[0]!;
  };
  const deployment = byKind('Deployment');
  const configMap = byKind('ConfigMap');
  const secret = byKind('Secret');
  const pod = deployment.spec.template.spec as Node;
  const container = pod.containers[0] as Node;
  const portByName = new Map<string, number>((container.ports as Node[]).map((port) => [port.name, port.containerPort]));
  const envOf = (): Record<string, string> => {
    const env: Record<string, string> = {};
    for (const source of container.envFrom as Node[]) {
      assert.equal(source.secretRef.name, secret.metadata.name, 'envFrom names the Secret');
      for (const [name, value] of Object.entries(secret.stringData as Record<string, unknown>)) {
        assert.equal(typeof value, 'string', `Secret ${name} is a string (quote it)`);
        env[name] = value as string;
      }
    }
    for (const variable of container.env as Node[]) env[variable.name] = variable.value;
    return env;
  };

  it('the ConfigMap is a config the product reads, with every ${NAME} given by the Secret or the Deployment, and policies that load', async () => {
    const { config, folder } = readProductConfig(configMap.data, envOf());
    try {
      assert.equal(config.watchPolicies, true, 'watchPolicies on: a ConfigMap update reloads');
      assert.ok(config.metrics !== undefined, 'metrics on');
      const set = await loadPolicySet(policySetSources(config));
      assert.ok(set.policies.length > 0);
      for (const name of JSON.stringify(configMap.data['guard.json']).matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) {
        assert.ok(name[1]! in secret.stringData, `${name[1]} comes from the Secret`);
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('the Deployment: 2 replicas, probes on /healthz and /readyz at the SPARQL port, the metrics port, GUARD_CONFIG in the mounted ConfigMap', () => {
    const { config, folder } = readProductConfig(configMap.data, envOf());
    rmSync(folder, { recursive: true, force: true });
    assert.equal(deployment.spec.replicas, 2);
    assert.equal(container.livenessProbe.httpGet.path, '/healthz');
    assert.equal(container.readinessProbe.httpGet.path, '/readyz');
    assert.equal(portByName.get(container.livenessProbe.httpGet.port), config.port);
    assert.equal(portByName.get(container.readinessProbe.httpGet.port), config.port);
    assert.equal(portByName.get('metrics'), config.metrics!.port);
    assert.equal(Number(deployment.spec.template.metadata.annotations['prometheus.io/port']), config.metrics!.port);
    assert.equal(deployment.spec.template.metadata.annotations['prometheus.io/path'], '/metrics');
    const mount = (container.volumeMounts as Node[]).find((each) => each.name === 'config')!;
    const volume = (pod.volumes as Node[]).find((each) => each.name === 'config')!;
    assert.equal(volume.configMap.name, configMap.metadata.name);
    assert.equal(envOf().GUARD_CONFIG, `${mount.mountPath}/guard.json`);
    assert.ok('guard.json' in configMap.data);
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.equal(container.securityContext.readOnlyRootFilesystem, true);
    assert.ok(container.resources.requests.cpu && container.resources.requests.memory, 'resource requests');
    assert.ok(pod.terminationGracePeriodSeconds >= 15, 'room for the drain and the grace before SIGKILL');
    assert.equal(container.lifecycle?.preStop, undefined, 'no preStop: the guard drains by itself');
  });

  it('the Service, PodDisruptionBudget and HorizontalPodAutoscaler point at the Deployment', () => {
    const labels = deployment.spec.template.metadata.labels as Record<string, string>;
    const matches = (selector: Record<string, string>) => Object.entries(selector).every(([key, value]) => labels[key] === value);
    const service = byKind('Service');
    assert.ok(matches(service.spec.selector));
    for (const port of service.spec.ports as Node[])
      assert.ok(portByName.has(port.targetPort), `Service targetPort ${port.targetPort} is a container port`);
    assert.ok(matches(byKind('PodDisruptionBudget').spec.selector.matchLabels));
    const hpa = byKind('HorizontalPodAutoscaler');
    assert.equal(hpa.spec.scaleTargetRef.kind, 'Deployment');
    assert.equal(hpa.spec.scaleTargetRef.name, deployment.metadata.name);
    assert.ok(hpa.spec.minReplicas >= 2);
  });
});

describe('deploy/compose', () => {
  const [compose] = readYaml(join(COMPOSE, 'compose.yaml'));
  const guard = compose!.services.guard as Node;
  const store = compose!.services.store as Node;

  it('the guard reads the mounted config with the environment compose gives it, in front of a store that honours FROM', () => {
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(guard.environment as Record<string, string>))
      env[name] = String(value).replace(/^\$\{[A-Z0-9_]+:-(.*)\}$/, '$1');
    const [hostFolder, mountPath] = (guard.volumes[0] as string).split(':');
    assert.equal(env.GUARD_CONFIG, `${mountPath}/guard.json`);
    const files = Object.fromEntries(
      readdirSync(join(COMPOSE, hostFolder!)).map((name) => [name, readFileSync(join(COMPOSE, hostFolder!, name), 'utf8')]),
    );
    const { config, folder } = readProductConfig(files, env);
    rmSync(folder, { recursive: true, force: true });
    assert.equal(new URL(config.upstream!).hostname, 'store', 'the upstream is the compose store service');
    assert.ok((store.command as string[]).every((word) => word !== '--union-default-graph'));
    const published = (guard.ports as string[]).map((mapping) => Number(mapping.split(':').pop()));
    assert.ok(published.includes(config.port), 'the SPARQL port is published');
    assert.ok(published.includes(config.metrics!.port), 'the metrics port is published');
    assert.equal(guard.build, '../..', 'built from the repository Dockerfile');
  });
});
