// The NetworkPolicy of a repo's namespace: its task pods take no
// connections and open only three kinds: to the agent proxy and to the
// runner's two git endpoints, each by IP and port. No DNS: the pods are given
// addresses, never names, so port 53 stays closed and no name can be used to
// tunnel out. It holds only where the cluster's CNI enforces NetworkPolicy
// (Calico, Cilium, ...); elsewhere it is accepted and ignored. Pure.
import type { V1NetworkPolicy, V1NetworkPolicyEgressRule } from '@kubernetes/client-node';
import { urlEndpoint } from '../../../src/control/registry/kubernetes.js';
import { repoLabels } from '../labels.js';
import { repoPolicyName, type RepoPolicySpec } from './spec.js';

/** One egress rule per distinct IP and port, in the order proxy, fetch, push. */
function egressRules(spec: RepoPolicySpec): V1NetworkPolicyEgressRule[] {
  const { kubernetes } = spec;
  const endpoints = [kubernetes.proxy, urlEndpoint(kubernetes.gitFetchUrl), urlEndpoint(kubernetes.gitPushUrl)];
  const seen = new Set<string>();
  const rules: V1NetworkPolicyEgressRule[] = [];
  for (const { ip, port } of endpoints) {
    const key = `${ip} ${port}`;
    if (seen.has(key)) continue;
    seen.add(key);
    rules.push({
      to: [{ ipBlock: { cidr: ip.includes(':') ? `${ip}/128` : `${ip}/32` } }],
      ports: [{ protocol: 'TCP', port }],
    });
  }
  return rules;
}

/** Pure: the NetworkPolicy of the repo's namespace, selecting every pod agent-runner starts there for the repo. */
export function repoNetworkPolicy(spec: RepoPolicySpec): V1NetworkPolicy {
  const labels = repoLabels(spec.repo);
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: repoPolicyName(spec.repo), namespace: spec.kubernetes.namespace, labels },
    spec: {
      podSelector: { matchLabels: labels },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress: egressRules(spec),
    },
  };
}
