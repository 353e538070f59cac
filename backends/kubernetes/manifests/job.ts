// The Job of one task attempt: a clone step, then the task worker, in a
// pod that can do nothing else. backoffLimit 0 (the drain owns retries), a
// deadline from the attempt's wall-clock bound, a TTL, and a pod failure
// policy that fails the Job at once on any end of its pod other than
// success: an evicted or preempted pod (condition DisruptionTarget) fails it
// as a disruption, which the drain reads as an eviction (jobs/verdict.ts)
// and runs again as a new Job without charging an attempt; any other exit
// of the agent fails it with the container and its exit code. The drain,
// not the Job controller, replaces an evicted pod: a new Job gets a fresh
// deadline, a fresh push token and its own log from the first line. The
// rules are tried in order, so an eviction (which ends the agent with
// SIGTERM, exit 143) is caught by the first before the second sees its exit
// code. Pure.
import type { V1Container, V1EnvVar, V1Job, V1SecurityContext } from '@kubernetes/client-node';
import { taskLabels } from '../labels.js';
import { bytesQuantity, cpuRequest } from './quantity.js';
import {
  AGENT_CONTAINER,
  CLONE_CONTAINER,
  ManifestSpecError,
  POD_PATHS,
  POD_UID,
  PUSH_TOKEN_KEY,
  resultRef,
  taskObjectName,
  type TaskJobSpec,
} from './spec.js';
import { urlEndpoint } from '../../../src/control/registry/kubernetes.js';

/** Every container: no privileges, nothing written outside its emptyDirs. */
const containerSecurity = (): V1SecurityContext => ({
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ['ALL'] },
});

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function hostPort(endpoint: { ip: string; port: number }): string {
  return endpoint.ip.includes(':') ? `[${endpoint.ip}]:${endpoint.port}` : `${endpoint.ip}:${endpoint.port}`;
}

/** What the agent container is told by the builder itself; the spec's env may not change it. */
function builtInEnv(spec: TaskJobSpec): Record<string, string> {
  const { kubernetes } = spec;
  const proxy = `http://${hostPort(kubernetes.proxy)}`;
  const direct = [...new Set([urlEndpoint(kubernetes.gitFetchUrl).ip, urlEndpoint(kubernetes.gitPushUrl).ip])];
  return {
    HOME: POD_PATHS.home,
    TMPDIR: POD_PATHS.tmp,
    http_proxy: proxy,
    https_proxy: proxy,
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    no_proxy: direct.join(','),
    NO_PROXY: direct.join(','),
    GIT_TERMINAL_PROMPT: '0',
    AGENT_RUNNER_REPO: spec.repo,
    AGENT_RUNNER_RUN: spec.run,
    AGENT_RUNNER_TASK: spec.task,
    AGENT_RUNNER_ATTEMPT: String(spec.attempt),
    AGENT_RUNNER_BASE_COMMIT: spec.base.commit,
    AGENT_RUNNER_PUSH_URL: kubernetes.gitPushUrl,
    AGENT_RUNNER_RESULT_REF: resultRef(spec.task, spec.attempt),
  };
}

/** The agent container's environment: built-ins, the spec's own, then each Secret key by reference. */
function agentEnv(spec: TaskJobSpec, secretName: string): V1EnvVar[] {
  const builtIn = builtInEnv(spec);
  for (const name of Object.keys(spec.env)) {
    if (Object.hasOwn(builtIn, name))
      throw new ManifestSpecError(spec, `env.${name}`, 'is set by the Job itself', 'remove it from the env');
    if (!ENV_NAME.test(name))
      throw new ManifestSpecError(spec, `env.${name}`, 'is not a variable name', 'use letters, digits and "_"');
  }
  if (!spec.secretKeys.includes(PUSH_TOKEN_KEY))
    throw new ManifestSpecError(
      spec,
      'secretKeys',
      `has no ${PUSH_TOKEN_KEY}: the worker could not push its result`,
      'put the per-task push token in the Secret',
    );
  for (const key of spec.secretKeys)
    if (Object.hasOwn(builtIn, key) || Object.hasOwn(spec.env, key) || !ENV_NAME.test(key))
      throw new ManifestSpecError(
        spec,
        `secretKeys.${key}`,
        'is not a variable name of its own',
        'name each secret a variable no other entry sets',
      );
  const operators = spec.kubernetes.agentSecret;
  for (const key of operators?.keys ?? [])
    if (Object.hasOwn(builtIn, key) || Object.hasOwn(spec.env, key) || spec.secretKeys.includes(key))
      throw new ManifestSpecError(
        spec,
        `kubernetes.agentSecret.keys.${key}`,
        'is a variable the Job sets already',
        'give the agent credential a variable of its own',
      );
  return [
    ...Object.entries({ ...builtIn, ...spec.env }).map(([name, value]) => ({ name, value })),
    ...spec.secretKeys.map((key) => ({
      name: key,
      valueFrom: { secretKeyRef: { name: secretName, key, optional: false } },
    })),
    // The agent's credential, from the operator's own Secret: the kubelet reads it, the runner never does.
    ...(operators?.keys ?? []).map((key) => ({
      name: key,
      valueFrom: { secretKeyRef: { name: operators!.name, key, optional: false } },
    })),
  ];
}

function resources(spec: TaskJobSpec): V1Container['resources'] {
  const memory = bytesQuantity(spec.limits.memoryMax);
  return {
    requests: { cpu: cpuRequest(spec.limits), memory },
    limits: { memory, ...(spec.kubernetes.cpuMax === undefined ? {} : { cpu: spec.kubernetes.cpuMax }) },
  };
}

function checkSpec(spec: TaskJobSpec): void {
  if (!Number.isInteger(spec.deadlineSec) || spec.deadlineSec <= 0)
    throw new ManifestSpecError(
      spec,
      'deadlineSec',
      `must be a positive whole number, got ${spec.deadlineSec}`,
      "pass the attempt's wall-clock bound in seconds",
    );
  if (!Number.isInteger(spec.attempt) || spec.attempt < 1)
    throw new ManifestSpecError(spec, 'attempt', `must be 1 or more, got ${spec.attempt}`, 'count attempts from 1');
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(spec.base.commit))
    throw new ManifestSpecError(
      spec,
      'base.commit',
      `is not a full commit id: ${JSON.stringify(spec.base.commit)}`,
      'pass the base commit in full',
    );
  if (spec.worker.length === 0)
    throw new ManifestSpecError(spec, 'worker', 'is empty', "pass the task worker's argv in the image");
}

/** Pure: the Job of one task attempt. Throws ManifestSpecError (or LabelValueError) for a spec it cannot build. */
export function taskJobManifest(spec: TaskJobSpec): V1Job {
  checkSpec(spec);
  const name = taskObjectName(spec);
  const labels = taskLabels(spec);
  const { kubernetes } = spec;
  // Fresh objects everywhere: a caller that edits one container's mounts or the pod's labels edits only those.
  const work = () => ({ name: 'work', mountPath: POD_PATHS.work });
  const tmp = () => ({ name: 'tmp', mountPath: POD_PATHS.tmp });
  const clone: V1Container = {
    name: CLONE_CONTAINER,
    image: kubernetes.image,
    command: [
      'git',
      'clone',
      '--no-tags',
      '--single-branch',
      '--branch',
      spec.base.branch,
      '--',
      kubernetes.gitFetchUrl,
      POD_PATHS.repo,
    ],
    env: [
      { name: 'HOME', value: POD_PATHS.tmp },
      { name: 'GIT_TERMINAL_PROMPT', value: '0' },
      { name: 'GIT_CONFIG_NOSYSTEM', value: '1' },
    ],
    resources: resources(spec),
    securityContext: containerSecurity(),
    volumeMounts: [work(), tmp()],
  };
  const agent: V1Container = {
    name: AGENT_CONTAINER,
    image: kubernetes.image,
    command: [...spec.worker],
    workingDir: POD_PATHS.repo,
    env: agentEnv(spec, name),
    resources: resources(spec),
    securityContext: containerSecurity(),
    volumeMounts: [work(), tmp(), { name: 'home', mountPath: POD_PATHS.home }],
  };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: kubernetes.namespace, labels },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: spec.deadlineSec,
      ttlSecondsAfterFinished: kubernetes.ttlSec,
      podReplacementPolicy: 'Failed',
      podFailurePolicy: {
        rules: [
          { action: 'FailJob', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
          { action: 'FailJob', onExitCodes: { containerName: AGENT_CONTAINER, operator: 'NotIn', values: [0] } },
        ],
      },
      template: {
        metadata: { labels: { ...labels } },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          ...(kubernetes.serviceAccount === undefined ? {} : { serviceAccountName: kubernetes.serviceAccount }),
          securityContext: {
            runAsNonRoot: true,
            runAsUser: POD_UID,
            runAsGroup: POD_UID,
            fsGroup: POD_UID,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          initContainers: [clone],
          containers: [agent],
          volumes: [
            { name: 'work', emptyDir: { sizeLimit: bytesQuantity(kubernetes.workspaceBytes) } },
            { name: 'tmp', emptyDir: { sizeLimit: bytesQuantity(kubernetes.tmpBytes) } },
            { name: 'home', emptyDir: { sizeLimit: bytesQuantity(kubernetes.tmpBytes) } },
          ],
        },
      },
    },
  };
}
