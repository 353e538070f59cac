// Builders of the Kubernetes backend's inputs for tests: a repo's resolved
// settings and one task attempt's Job and Secret specs, each field
// overridable, the values those of a plausible cluster.
import type { RepoKubernetes, RunLimits } from '../../src/types.js';
import { PUSH_TOKEN_KEY, type TaskJobSpec, type TaskSecretSpec } from '../../backends/kubernetes/index.js';

export const DIGEST = `sha256:${'ab12'.repeat(16)}`;

export function aKubernetesRepo(overrides: Partial<RepoKubernetes> = {}): RepoKubernetes {
  return {
    cluster: { kind: 'context', context: 'prod', kubeconfig: '/etc/agent-runner/kube/web.yaml' },
    namespace: 'agent-runner-web',
    image: `registry.example.com/agent-runner/worker@${DIGEST}`,
    proxy: { ip: '10.0.0.5', port: 3128 },
    gitFetchUrl: 'git://10.0.0.5:9418/web.git',
    gitPushUrl: 'https://10.0.0.6:8443/web.git',
    workspaceBytes: 10 * 1024 ** 3,
    tmpBytes: 1024 ** 3,
    ttlSec: 3600,
    ...overrides,
  };
}

export const LIMITS: RunLimits = { tasksMax: 1024, memoryMax: 8 * 1024 ** 3, cpuWeight: 100 };

export function aJobSpec(overrides: Partial<TaskJobSpec> = {}): TaskJobSpec {
  return {
    repo: 'web',
    run: '20261206T044500-3f2a',
    task: 'TASK-12.1',
    attempt: 2,
    kubernetes: aKubernetesRepo(),
    limits: LIMITS,
    deadlineSec: 3 * 3600,
    base: { branch: 'auto/work', commit: '0123456789abcdef0123456789abcdef01234567' },
    worker: ['agent-runner', 'task-worker', '--task', 'TASK-12.1'],
    env: { NODE_OPTIONS: '--max-old-space-size=4096' },
    secretKeys: ['AGENT_RUNNER_CAPABILITY', PUSH_TOKEN_KEY],
    ...overrides,
  };
}

export function aSecretSpec(overrides: Partial<TaskSecretSpec> = {}): TaskSecretSpec {
  return {
    repo: 'web',
    run: '20261206T044500-3f2a',
    task: 'TASK-12.1',
    attempt: 2,
    namespace: 'agent-runner-web',
    values: { AGENT_RUNNER_CAPABILITY: 'arcap_test_capability', [PUSH_TOKEN_KEY]: 'push-token-for-task-12.1' },
    ...overrides,
  };
}
