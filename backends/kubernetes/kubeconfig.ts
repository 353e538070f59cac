// Where the runner's kubeconfig is, and what doctor checks in it: the file
// holds a credential of the cluster, so only the runner may read it, and the
// context the registry names must be in it. Pure.
import * as path from 'node:path';
import { parse } from 'yaml';
import type { RepoKubernetes } from '../../src/types.js';

/** The kubeconfig the registry names, else the runner's ~/.kube/config; undefined in-cluster. */
export function kubeconfigFile(cluster: RepoKubernetes['cluster'], runnerHome: string): string | undefined {
  if (cluster.kind === 'in-cluster') return undefined;
  return cluster.kubeconfig ?? path.join(runnerHome, '.kube', 'config');
}

/** Where a pod's service account token is mounted: what an in-cluster runner reads. */
export const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** Pure: the context names of a kubeconfig's text, or the reason it is not one. */
export function kubeconfigContexts(text: string): string[] | string {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    return `is not YAML: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
  }
  const contexts = (document as { contexts?: unknown } | null)?.contexts;
  if (!Array.isArray(contexts)) return 'has no contexts list';
  return contexts.flatMap((entry: unknown) => {
    const name = (entry as { name?: unknown } | null)?.name;
    return typeof name === 'string' ? [name] : [];
  });
}
