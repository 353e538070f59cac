// doctor's Kubernetes lines for a repo with backend = "kubernetes": the
// settings the registry resolved, the runner's way into the cluster (its
// kubeconfig private to it and holding the named context, or the pod's
// service account), and what of the run limits a pod keeps: memory_max and
// cpu_weight become the pod's resources; tasks_max has no per-pod equivalent
// (the kubelet's podPidsLimit is node-wide), so doctor warns. Nothing here
// talks to the cluster: doctor says what the registry and files show.
import type { FsPort } from '../../src/ports.js';
import type { RegistryRepo, RepoKubernetes } from '../../src/types.js';
import { formatSize } from '../../src/control/registry/limits.js';
import type { Check } from '../host/check.js';
import { IN_CLUSTER_TOKEN, kubeconfigContexts, kubeconfigFile } from './kubeconfig.js';
import { bytesQuantity, cpuRequest } from './manifests/quantity.js';

/** What doctor read for the runner's way into the cluster. */
export interface ClusterAccessFacts {
  /** The runner's uid and home; undefined when the user does not exist (reported elsewhere). */
  readonly runner: { readonly uid: number; readonly home: string } | undefined;
  /** The credential file: the kubeconfig, or the in-cluster token. */
  readonly file: string | undefined;
  readonly stat: { readonly uid: number; readonly mode: number; readonly isFile: boolean } | undefined;
  readonly text: string | undefined;
}

export async function readClusterAccessFacts(
  fs: Pick<FsPort, 'stat' | 'readTextIfExists'>,
  kubernetes: RepoKubernetes,
  runner: { readonly uid: number; readonly home: string } | undefined,
): Promise<ClusterAccessFacts> {
  const file =
    kubernetes.cluster.kind === 'in-cluster'
      ? IN_CLUSTER_TOKEN
      : runner === undefined && kubernetes.cluster.kubeconfig === undefined
        ? undefined
        : kubeconfigFile(kubernetes.cluster, runner?.home ?? '/');
  const stat = file === undefined ? undefined : await fs.stat(file);
  // The edge reads regular files only, bounded; anything else is reported as unreadable.
  const text =
    file !== undefined && stat !== undefined && !stat.isDirectory && kubernetes.cluster.kind === 'context'
      ? await fs.readTextIfExists(file).catch(() => undefined)
      : undefined;
  return {
    runner,
    file,
    stat: stat === undefined ? undefined : { uid: stat.uid, mode: stat.mode, isFile: !stat.isDirectory },
    text,
  };
}

function settingsCheck(repo: RegistryRepo, kubernetes: RepoKubernetes): Check {
  const cluster =
    kubernetes.cluster.kind === 'in-cluster' ? 'in-cluster service account' : `context ${kubernetes.cluster.context}`;
  return {
    name: 'kubernetes settings',
    ok: true,
    detail: `${cluster}, namespace ${kubernetes.namespace}, image ${kubernetes.image}; pods reach the proxy ${kubernetes.proxy.ip}:${kubernetes.proxy.port}, fetch from ${kubernetes.gitFetchUrl}, push to ${kubernetes.gitPushUrl}; emptyDirs ${formatSize(kubernetes.workspaceBytes)} (work) and ${formatSize(kubernetes.tmpBytes)} (tmp, home); finished Jobs kept ${kubernetes.ttlSec}s (repos.${repo.name}.kubernetes)`,
    fix: '',
  };
}

/** Pure: what a pod keeps of the repo's run limits; a warning, never a failure, for tasks_max. */
export function podLimitsCheck(repo: RegistryRepo, kubernetes: RepoKubernetes): Check {
  const cpu = kubernetes.cpuMax === undefined ? 'no CPU limit' : `CPU limit ${kubernetes.cpuMax}`;
  return {
    name: 'run limits in a pod',
    ok: true,
    warn: true,
    detail: `memory_max ${formatSize(repo.limits.memoryMax)} is each pod's memory request and limit (${bytesQuantity(repo.limits.memoryMax)}), cpu_weight ${repo.limits.cpuWeight} its CPU request (${cpuRequest(repo.limits)}), ${cpu}; tasks_max ${repo.limits.tasksMax} has no per-pod equivalent and is not applied: process limits in a pod are the kubelet's podPidsLimit, set per node`,
    fix: `set the kubelet's podPidsLimit on the nodes that run repos.${repo.name}'s Jobs (KubeletConfiguration podPidsLimit: ${repo.limits.tasksMax}) if a fork bomb in one pod must not starve the node`,
  };
}

/** Pure: whether only the runner can read the credential file, and it holds the context the registry names. */
export function clusterAccessCheck(kubernetes: RepoKubernetes, facts: ClusterAccessFacts): Check {
  const name = 'cluster credentials';
  const fail = (detail: string, fix: string): Check => ({ name, ok: false, detail, fix });
  if (kubernetes.cluster.kind === 'in-cluster') {
    if (facts.stat?.isFile !== true)
      return fail(
        `in_cluster = true, but ${IN_CLUSTER_TOKEN} is missing: the runner is not in a pod with a service account token`,
        'run the runner in a pod whose service account is bound to the runner Role, or use context and kubeconfig',
      );
    return { name, ok: true, detail: `the runner uses its pod's service account (${IN_CLUSTER_TOKEN})`, fix: '' };
  }
  const context = kubernetes.cluster.context;
  if (facts.file === undefined)
    return fail('the runner user does not exist, so its kubeconfig cannot be found', 'provision the repo first');
  if (facts.stat === undefined || !facts.stat.isFile)
    return fail(
      `${facts.file} ${facts.stat === undefined ? 'does not exist' : 'is not a regular file'}`,
      `write a kubeconfig with context "${context}" there (kubectl config view --minify --flatten --context ${context}), owned by the runner, mode 0600`,
    );
  if (facts.runner !== undefined && facts.stat.uid !== facts.runner.uid)
    return fail(
      `${facts.file} is owned by uid ${facts.stat.uid}, not the runner (uid ${facts.runner.uid})`,
      `chown the file to the runner: it holds the runner's credential of the cluster`,
    );
  if ((facts.stat.mode & 0o077) !== 0)
    return fail(
      `${facts.file} is mode ${(facts.stat.mode & 0o777).toString(8)}: others can read the runner's credential of the cluster`,
      `chmod 0600 ${facts.file}`,
    );
  if (facts.text === undefined)
    return fail(
      `${facts.file} cannot be read as a regular file`,
      `write the kubeconfig there as a plain file, mode 0600`,
    );
  const contexts = kubeconfigContexts(facts.text);
  if (typeof contexts === 'string')
    return fail(`${facts.file} ${contexts}`, 'write a kubeconfig there (kubectl config view --minify --flatten)');
  if (!contexts.includes(context))
    return fail(
      `${facts.file} has no context "${context}" (it has: ${contexts.join(', ') || 'none'})`,
      `add it (kubectl config view --minify --flatten --context ${context}) or name one of those in context`,
    );
  return { name, ok: true, detail: `${facts.file} holds context "${context}", readable by the runner alone`, fix: '' };
}

/** doctor's Kubernetes lines for a repo; none for a repo on the host backend. */
export async function checkKubernetes(
  fs: Pick<FsPort, 'stat' | 'readTextIfExists'>,
  repo: RegistryRepo,
  runner: { readonly uid: number; readonly home: string } | undefined,
): Promise<Check[]> {
  const kubernetes = repo.kubernetes;
  if (kubernetes === undefined) return [];
  const facts = await readClusterAccessFacts(fs, kubernetes, runner);
  return [settingsCheck(repo, kubernetes), podLimitsCheck(repo, kubernetes), clusterAccessCheck(kubernetes, facts)];
}
