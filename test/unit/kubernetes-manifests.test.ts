// The Kubernetes manifest builders: each output equals its golden file, is
// accepted by the API server's schema (kubernetes-models) and by its rules
// beyond the schema, and comes back unchanged through
// @kubernetes/client-node's serializer; and the checks themselves fail on
// what the API server or the client would refuse or drop.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1Container, V1Job } from '@kubernetes/client-node';
import {
  apiServerProblems,
  labelValue,
  LabelValueError,
  ManifestSpecError,
  PUSH_TOKEN_KEY,
  repoNetworkPolicy,
  runnerRole,
  runnerRoleBinding,
  SerializationLossError,
  serializedUnchanged,
  survivesSerialization,
  taskJobManifest,
  taskObjectName,
  taskSecretManifest,
  type SerializedType,
} from '../../backends/kubernetes/index.js';
import { validateManifest } from '../helpers/fake-kube-validate.js';
import { aJobSpec, aKubernetesRepo, aSecretSpec } from '../helpers/fake-kube-specs.js';

const GOLDEN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/kubernetes');
const golden = (file: string): unknown => JSON.parse(fs.readFileSync(path.join(GOLDEN, file), 'utf8'));

const built: readonly [string, SerializedType, unknown][] = [
  ['job.json', 'V1Job', taskJobManifest(aJobSpec())],
  ['secret.json', 'V1Secret', taskSecretManifest(aSecretSpec())],
  ['network-policy.json', 'V1NetworkPolicy', repoNetworkPolicy({ repo: 'web', kubernetes: aKubernetesRepo() })],
  ['role.json', 'V1Role', runnerRole({ namespace: 'agent-runner-web' })],
  [
    'role-binding.json',
    'V1RoleBinding',
    runnerRoleBinding({ namespace: 'agent-runner-web', subject: { kind: 'User', name: 'agent-runner-web' } }),
  ],
];

t.test(
  'each builder equals its golden file, passes the schema and the API rules, and survives the client',
  async (t) => {
    for (const [file, type, object] of built) {
      t.same(object, golden(file), `${file}: as golden`);
      t.same(validateManifest(object), [], `${file}: schema and API rules accept it`);
      t.same(survivesSerialization(object, type), { ok: true }, `${file}: unchanged through the ${type} serializer`);
      t.equal(serializedUnchanged(object, type), object, `${file}: the guard passes it through`);
    }
  },
);

t.test('a misspelled or unknown field is dropped by the client, and the round trip says where', async (t) => {
  const job = taskJobManifest(aJobSpec());
  const misspelled = { ...job, spec: { ...job.spec!, bakoffLimit: 3 } } as V1Job;
  t.same(validateManifest(misspelled), [], 'the schema lets an unknown field through');
  t.same(survivesSerialization(misspelled, 'V1Job'), { ok: false, differences: ['spec.bakoffLimit: dropped'] });
  const deep = structuredClone(job) as unknown as {
    spec: { template: { spec: { containers: Record<string, unknown>[] } } };
  };
  deep.spec.template.spec.containers[0]!.securityContxt = { privileged: true };
  t.same(survivesSerialization(deep, 'V1Job'), {
    ok: false,
    differences: ['spec.template.spec.containers[0].securityContxt: dropped'],
  });
  t.throws(() => serializedUnchanged(misspelled, 'V1Job'), SerializationLossError);
  t.throws(
    () => serializedUnchanged(misspelled, 'V1Job'),
    /the V1Job ar-web-task-12-1-2-[0-9a-f]{10} would not reach the API server as built .*spec\.bakoffLimit: dropped/,
  );
  const asSecret = survivesSerialization(job, 'V1Secret');
  t.equal(asSecret.ok, false, 'a Job sent as a Secret loses its spec');
});

t.test('the schema and the API rules refuse what the API server refuses', async (t) => {
  const job = (edit: (job: V1Job) => void): V1Job => {
    const copy = structuredClone(taskJobManifest(aJobSpec()));
    edit(copy);
    return copy;
  };
  const cases: readonly [string, V1Job, RegExp][] = [
    [
      'podFailurePolicy beside restartPolicy OnFailure',
      job((j) => (j.spec!.template.spec!.restartPolicy = 'OnFailure')),
      /^spec\.template\.spec\.restartPolicy: must be Never when podFailurePolicy is set$/,
    ],
    [
      'a label value with a slash',
      job((j) => (j.metadata!.labels!['agent-runner/task'] = 'feature/x')),
      /^metadata\.labels\[agent-runner\/task\]: value "feature\/x" is not a label value$/,
    ],
    [
      'a label value of 64 characters',
      job((j) => (j.spec!.template.metadata!.labels!['agent-runner/run'] = 'r'.repeat(64))),
      /^spec\.template\.metadata\.labels\[agent-runner\/run\]: value "r{64}" is not a label value$/,
    ],
    [
      'a deadline of 0',
      job((j) => (j.spec!.activeDeadlineSeconds = 0)),
      /^spec\.activeDeadlineSeconds: must be a whole number of at least 1, got 0$/,
    ],
    [
      'an exit-code rule naming no container',
      job((j) => (j.spec!.podFailurePolicy!.rules[1]!.onExitCodes!.containerName = 'agnet')),
      /^spec\.podFailurePolicy\.rules\[1\]\.onExitCodes\.containerName: "agnet" is not a container of the pod$/,
    ],
    [
      'a mount of no volume',
      job((j) => (j.spec!.template.spec!.containers[0]!.volumeMounts![0]!.name = 'wrok')),
      /^spec\.template\.spec\.containers\[0\]\.volumeMounts\[0\]\.name: "wrok" is not a volume of the pod$/,
    ],
    [
      'a zero emptyDir size',
      job((j) => (j.spec!.template.spec!.volumes![0]!.emptyDir!.sizeLimit = '0')),
      /^spec\.template\.spec\.volumes\[0\]\.emptyDir\.sizeLimit: "0" is not a positive quantity$/,
    ],
    [
      'podReplacementPolicy TerminatingOrFailed beside a podFailurePolicy',
      job((j) => (j.spec!.podReplacementPolicy = 'TerminatingOrFailed')),
      /^spec\.podReplacementPolicy: must be Failed when podFailurePolicy is set$/,
    ],
    [
      'a backoffLimit that is not a number (the schema)',
      job((j) => ((j.spec as unknown as Record<string, unknown>).backoffLimit = 'none')),
      /^spec\.backoffLimit: must be integer$/,
    ],
  ];
  for (const [what, object, expected] of cases) {
    const problems = validateManifest(object);
    t.equal(problems.length, 1, `${what}: one problem (${problems.join(' | ')})`);
    t.match(problems[0] ?? '', expected, what);
  }
  t.same(apiServerProblems({ apiVersion: 'v1', kind: 'Pod' }), ['kind: "Pod" is not one agent-runner builds']);
  const secret = structuredClone(taskSecretManifest(aSecretSpec()));
  secret.data!['bad key'] = 'not base64!';
  t.same(apiServerProblems(secret), ['data[bad key]: is not a valid Secret key', 'data[bad key]: is not base64']);
  const policy = structuredClone(repoNetworkPolicy({ repo: 'web', kubernetes: aKubernetesRepo() }));
  policy.spec!.egress![0]!.to![0]!.ipBlock!.cidr = '10.0.0.5';
  t.same(apiServerProblems(policy), ['spec.egress[0].to[0].ipBlock.cidr: "10.0.0.5" is not a CIDR']);
});

t.test('the pod is restricted, and only the agent container gets the Secret', async (t) => {
  const job = taskJobManifest(aJobSpec());
  const pod = job.spec!.template.spec!;
  t.equal(job.spec!.backoffLimit, 0);
  t.equal(job.spec!.activeDeadlineSeconds, 3 * 3600);
  t.equal(job.spec!.ttlSecondsAfterFinished, 3600);
  t.same(job.spec!.podFailurePolicy!.rules[0], {
    action: 'FailJob',
    onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }],
  });
  t.equal(pod.automountServiceAccountToken, false);
  t.equal(pod.securityContext!.runAsNonRoot, true);
  t.same(pod.securityContext!.seccompProfile, { type: 'RuntimeDefault' });
  const all: V1Container[] = [...pod.initContainers!, ...pod.containers];
  t.same(
    all.map((c) => c.name),
    ['clone', 'agent'],
  );
  for (const container of all) {
    t.same(
      container.securityContext,
      {
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        capabilities: { drop: ['ALL'] },
      },
      `${container.name}: restricted`,
    );
    t.equal(container.image, aKubernetesRepo().image, `${container.name}: the pinned image`);
  }
  const fromSecret = (c: V1Container) => (c.env ?? []).filter((e) => e.valueFrom !== undefined).map((e) => e.name);
  t.same(fromSecret(pod.initContainers![0]!), [], 'clone: no secret');
  t.same(
    fromSecret(pod.containers[0]!),
    ['AGENT_RUNNER_CAPABILITY', PUSH_TOKEN_KEY],
    'agent: the Secret, by reference',
  );
  t.ok(
    pod.volumes!.every((v) => v.emptyDir?.sizeLimit !== undefined),
    'every volume an emptyDir with a size limit',
  );
  const secret = taskSecretManifest(aSecretSpec());
  t.equal(secret.metadata!.name, job.metadata!.name, 'the Secret is named like its Job');
  t.equal(Buffer.from(secret.data![PUSH_TOKEN_KEY]!, 'base64').toString(), 'push-token-for-task-12.1');
  const limited = taskJobManifest(
    aJobSpec({ kubernetes: aKubernetesRepo({ cpuMax: '1500m', serviceAccount: 'worker' }) }),
  );
  t.same(limited.spec!.template.spec!.containers[0]!.resources!.limits, { memory: '8Gi', cpu: '1500m' });
  t.equal(limited.spec!.template.spec!.serviceAccountName, 'worker');
  t.same(validateManifest(limited), []);
  const credentialed = taskJobManifest(
    aJobSpec({ kubernetes: aKubernetesRepo({ agentSecret: { name: 'claude-login', keys: ['ANTHROPIC_API_KEY'] } }) }),
  );
  const agentEnv = credentialed.spec!.template.spec!.containers[0]!.env!;
  t.same(
    agentEnv.find((e) => e.name === 'ANTHROPIC_API_KEY'),
    {
      name: 'ANTHROPIC_API_KEY',
      valueFrom: { secretKeyRef: { name: 'claude-login', key: 'ANTHROPIC_API_KEY', optional: false } },
    },
    "the agent's credential from the operator's Secret, by reference",
  );
  t.same(fromSecret(credentialed.spec!.template.spec!.initContainers![0]!), [], 'clone: still no secret');
  t.same(validateManifest(credentialed), []);
  t.throws(
    () =>
      taskJobManifest(
        aJobSpec({ kubernetes: aKubernetesRepo({ agentSecret: { name: 'x', keys: ['AGENT_RUNNER_CAPABILITY'] } }) }),
      ),
    /kubernetes\.agentSecret\.keys\.AGENT_RUNNER_CAPABILITY: is a variable the Job sets already/,
  );
});

t.test('names: a DNS label of at most 63, distinct per run, task and attempt', async (t) => {
  const long = { repo: 'a-very-long-repo-name-24c', run: 'r1', task: `TASK-${'9'.repeat(80)}`, attempt: 3 };
  const name = taskObjectName(long);
  t.ok(name.length <= 63 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name), name);
  t.not(taskObjectName({ ...long, run: 'r2' }), name, 'another run, another name');
  t.not(taskObjectName({ ...long, attempt: 4 }), name, 'another attempt, another name');
  t.equal(labelValue('TASK-12.1'), 'TASK-12.1');
  for (const raw of ['feature/x', '-x', 'x-', 'x'.repeat(64), '', 'täsk'])
    t.throws(() => labelValue(raw), LabelValueError, `${JSON.stringify(raw)} refused`);
  t.throws(() => taskJobManifest(aJobSpec({ task: 'feature/x' })), /"feature\/x" is not a label value/);
});

t.test('a spec the builders cannot build is refused with the field and the fix', async (t) => {
  const cases: readonly [string, () => unknown, RegExp][] = [
    [
      'env sets HOME',
      () => taskJobManifest(aJobSpec({ env: { HOME: '/root' } })),
      /env\.HOME: is set by the Job itself/,
    ],
    [
      'no push token',
      () => taskJobManifest(aJobSpec({ secretKeys: ['X'] })),
      /secretKeys: has no AGENT_RUNNER_PUSH_TOKEN/,
    ],
    [
      'a secret named like an env entry',
      () => taskJobManifest(aJobSpec({ secretKeys: ['NODE_OPTIONS', PUSH_TOKEN_KEY] })),
      /secretKeys\.NODE_OPTIONS: is not a variable name of its own/,
    ],
    ['deadline 0', () => taskJobManifest(aJobSpec({ deadlineSec: 0 })), /deadlineSec: must be a positive whole number/],
    ['a short commit', () => taskJobManifest(aJobSpec({ base: { branch: 'main', commit: 'abc' } })), /base\.commit/],
    ['no worker', () => taskJobManifest(aJobSpec({ worker: [] })), /worker: is empty/],
    ['an empty secret value', () => taskSecretManifest(aSecretSpec({ values: { [PUSH_TOKEN_KEY]: '' } })), /is empty/],
    [
      'an oversized secret',
      () => taskSecretManifest(aSecretSpec({ values: { [PUSH_TOKEN_KEY]: 'x'.repeat(1024 * 1024 + 1) } })),
      /a Secret holds at most 1048576/,
    ],
  ];
  for (const [what, build, message] of cases) {
    t.throws(build, ManifestSpecError, what);
    t.throws(build, message, what);
    t.throws(build, /^task TASK-12\.1 attempt 2 \(repo web\): /, `${what}: names the task`);
  }
});

t.test('the NetworkPolicy: no ingress, egress to the proxy and the git endpoints by IP, never DNS', async (t) => {
  const policy = repoNetworkPolicy({ repo: 'web', kubernetes: aKubernetesRepo() });
  t.same(policy.spec!.ingress, []);
  t.same(policy.spec!.policyTypes, ['Ingress', 'Egress']);
  t.same(
    policy.spec!.egress!.map((rule) => [rule.to![0]!.ipBlock!.cidr, rule.ports![0]!.port]),
    [
      ['10.0.0.5/32', 3128],
      ['10.0.0.5/32', 9418],
      ['10.0.0.6/32', 8443],
    ],
  );
  const shared = repoNetworkPolicy({
    repo: 'web',
    kubernetes: aKubernetesRepo({
      proxy: { ip: 'fd00::5', port: 3128 },
      gitFetchUrl: 'http://[fd00::5]:3128/web.git',
      gitPushUrl: 'https://10.0.0.6/web.git',
    }),
  });
  t.same(
    shared.spec!.egress!.map((rule) => [rule.to![0]!.ipBlock!.cidr, rule.ports![0]!.port]),
    [
      ['fd00::5/128', 3128],
      ['10.0.0.6/32', 443],
    ],
    'one rule per address; IPv6 as /128; the scheme default port',
  );
  t.same(validateManifest(shared), []);
});

t.test("the runner's Role: jobs, pods, pods/log, secrets and nothing else", async (t) => {
  const role = runnerRole({ namespace: 'agent-runner-web' });
  t.same(role.rules!.flatMap((rule) => rule.resources ?? []).sort(), ['jobs', 'pods', 'pods/log', 'secrets']);
  t.notOk(
    role.rules!.some((rule) => rule.verbs.some((verb) => ['*', 'escalate', 'bind', 'impersonate'].includes(verb))),
    'no wildcard or escalation verb',
  );
  const binding = runnerRoleBinding({
    namespace: 'agent-runner-web',
    subject: { kind: 'ServiceAccount', name: 'runner', namespace: 'agent-runner' },
  });
  t.same(binding.subjects, [{ kind: 'ServiceAccount', name: 'runner', namespace: 'agent-runner' }]);
  t.same(validateManifest(binding), []);
});
