// Against a real cluster, outside CI (none is reachable there): the
// manifests agent-runner builds are accepted by a real API server (the Role
// and RoleBinding by a server-side dry run), a Job clones the task's base
// through its init container and runs restricted, and the repo's
// NetworkPolicy is enforced (a pod cannot even resolve a name). Needs a kind
// or k3s cluster with a CNI that enforces NetworkPolicy (Calico, Cilium;
// kind's default kindnet enforces it from v0.24, k3s's flannel with its
// built-in policy controller), and a git daemon the pods reach by IP.
// docs/operations.md, "Task workers on Kubernetes", says how to run it:
//   AGENT_RUNNER_KUBE_E2E_CONTEXT      a context of $KUBECONFIG (or ~/.kube/config)
//   AGENT_RUNNER_KUBE_E2E_IMAGE        an image with git, by digest (NAME@sha256:...)
//   AGENT_RUNNER_KUBE_E2E_FETCH_URL    git://IP:PORT/REPO serving branch main
//   AGENT_RUNNER_KUBE_E2E_BASE_COMMIT  the commit main points at there
import t from 'tap';
import {
  BatchV1Api,
  CoreV1Api,
  KubeConfig,
  NetworkingV1Api,
  RbacAuthorizationV1Api,
  type V1Job,
} from '@kubernetes/client-node';
import {
  PUSH_TOKEN_KEY,
  repoNetworkPolicy,
  runnerRole,
  runnerRoleBinding,
  serializedUnchanged,
  taskJobManifest,
  taskSecretManifest,
} from '../../backends/kubernetes/index.js';
import { aJobSpec, aKubernetesRepo, aSecretSpec } from '../helpers/fake-kube-specs.js';
import { skipWithReason } from '../helpers/system.js';

const env = {
  context: process.env.AGENT_RUNNER_KUBE_E2E_CONTEXT,
  image: process.env.AGENT_RUNNER_KUBE_E2E_IMAGE,
  fetchUrl: process.env.AGENT_RUNNER_KUBE_E2E_FETCH_URL,
  baseCommit: process.env.AGENT_RUNNER_KUBE_E2E_BASE_COMMIT,
};

const missing = Object.entries(env)
  .filter(([, value]) => value === undefined || value === '')
  .map(([key]) => key);
if (missing.length) {
  skipWithReason(
    t,
    'task Jobs on a real cluster',
    `outside CI: needs a kind or k3s cluster with a policy-enforcing CNI and AGENT_RUNNER_KUBE_E2E_{CONTEXT,IMAGE,FETCH_URL,BASE_COMMIT} (missing: ${missing.join(', ')}); docs/operations.md`,
  );
} else {
  const kubeconfig = new KubeConfig();
  kubeconfig.loadFromDefault();
  kubeconfig.setCurrentContext(env.context!);
  const core = kubeconfig.makeApiClient(CoreV1Api);
  const batch = kubeconfig.makeApiClient(BatchV1Api);
  const networking = kubeconfig.makeApiClient(NetworkingV1Api);
  const rbac = kubeconfig.makeApiClient(RbacAuthorizationV1Api);
  const namespace = `agent-runner-e2e-${Date.now().toString(36)}`;
  const fetchHost = new URL(env.fetchUrl!).hostname;
  const kubernetes = aKubernetesRepo({
    namespace,
    image: env.image!,
    gitFetchUrl: env.fetchUrl!,
    // Nothing listens for pushes here; the policy still opens only these addresses.
    gitPushUrl: `http://${fetchHost}:8080/repo.git`,
    proxy: { ip: fetchHost, port: 3128 },
    workspaceBytes: 256 * 1024 ** 2,
    tmpBytes: 64 * 1024 ** 2,
    ttlSec: 600,
  });

  /** Polls the Job until it has a Complete or Failed condition; returns that condition's type and message. */
  const finished = async (name: string): Promise<{ type: string; message: string }> => {
    for (let i = 0; i < 180; i++) {
      const job = await batch.readNamespacedJob({ name, namespace });
      const done = job.status?.conditions?.find(
        (condition) => (condition.type === 'Complete' || condition.type === 'Failed') && condition.status === 'True',
      );
      if (done) return { type: done.type, message: done.message ?? '' };
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    throw new Error(`Job ${namespace}/${name} did not finish in 180 s`);
  };
  const agentLog = async (job: V1Job): Promise<string> => {
    const pods = await core.listNamespacedPod({ namespace, labelSelector: `job-name=${job.metadata!.name!}` });
    return core.readNamespacedPodLog({ name: pods.items[0]!.metadata!.name!, namespace, container: 'agent' });
  };
  const run = async (
    task: string,
    worker: readonly string[],
  ): Promise<{ job: V1Job; type: string; message: string }> => {
    const spec = { repo: 'web', run: 'e2e', task, attempt: 1 };
    const secret = taskSecretManifest(aSecretSpec({ ...spec, namespace, values: { [PUSH_TOKEN_KEY]: 'unused' } }));
    await core.createNamespacedSecret({ namespace, body: serializedUnchanged(secret, 'V1Secret') });
    const job = taskJobManifest(
      aJobSpec({
        ...spec,
        kubernetes,
        deadlineSec: 300,
        base: { branch: 'main', commit: env.baseCommit! },
        worker,
        env: {},
        secretKeys: [PUSH_TOKEN_KEY],
      }),
    );
    await batch.createNamespacedJob({ namespace, body: serializedUnchanged(job, 'V1Job') });
    return { job, ...(await finished(job.metadata!.name!)) };
  };

  t.before(async () => {
    await core.createNamespace({
      body: {
        metadata: {
          name: namespace,
          labels: { 'pod-security.kubernetes.io/enforce': 'restricted' },
        },
      },
    });
  });
  t.teardown(async () => {
    await core.deleteNamespace({ name: namespace });
  });

  t.test('the Role and RoleBinding are accepted (server-side dry run)', async (t) => {
    await rbac.createNamespacedRole({ namespace, body: runnerRole({ namespace }), dryRun: 'All' });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: runnerRoleBinding({ namespace, subject: { kind: 'User', name: 'agent-runner-e2e' } }),
      dryRun: 'All',
    });
    t.pass('accepted');
  });

  t.test('a Job clones the base and runs restricted, under the repo NetworkPolicy', async (t) => {
    await networking.createNamespacedNetworkPolicy({ namespace, body: repoNetworkPolicy({ repo: 'web', kubernetes }) });
    const cloned = await run('TASK-1', ['git', '-C', '/work/repo', 'rev-parse', 'HEAD']);
    t.equal(cloned.type, 'Complete', cloned.message);
    t.equal((await agentLog(cloned.job)).trim(), env.baseCommit, 'the clone step checked out the base');
    const dns = await run('TASK-2', ['git', 'ls-remote', 'git://kubernetes.default.svc.cluster.local/x']);
    t.equal(dns.type, 'Failed', 'no DNS: the pod cannot resolve a name');
    t.match(dns.message, /Container agent .* exit code/, 'the pod failure policy names the container and its code');
    t.match(await agentLog(dns.job), /resolve|Name or service not known|Temporary failure/i);
  });
}
