// The registry's backend key and [repos.NAME.kubernetes] table over
// [defaults.kubernetes]: the resolved settings, every problem at its own
// line with the fix, one namespace per repo, the table kept when provisioning
// rewrites the section; and doctor's Kubernetes lines.
import t from 'tap';
import { parseRegistry } from '../../src/control/registry/parse.js';
import { upsertRepo } from '../../src/control/registry/edit.js';
import { cronScheduler } from '../../src/io/cron.js';
import { clusterAccessCheck, podLimitsCheck, type ClusterAccessFacts } from '../../backends/kubernetes/doctor.js';
import { kubeconfigFile } from '../../backends/kubernetes/kubeconfig.js';
import { DIGEST } from '../helpers/fake-kube-specs.js';

const parse = (text: string) => parseRegistry(text, 'r.toml', cronScheduler);
const lines = (text: string) => parse(text).problems.map((p) => `${p.file} ${p.key}: ${p.problem}; ${p.fix}`);
const IMAGE = `registry.example.com/worker@${DIGEST}`;

const WEB = `[defaults.kubernetes]
context = "prod"
kubeconfig = "/etc/agent-runner/kube/config"
image = "${IMAGE}"
proxy = "10.0.0.5:3128"
git_fetch_url = "git://10.0.0.5:9418/repos.git"
git_push_url = "https://10.0.0.5:8443/repos.git"

[repos.web]
path = "/web"
proxy_port = 700
backend = "kubernetes"
memory_max = "4G"

[repos.web.kubernetes]
namespace = "agent-runner-web"
workspace_size = "20G"
tmp_size = "512M"
ttl_sec = 600
cpu_max = "1500m"
service_account = "worker"

[repos.api]
path = "/api"
proxy_port = 701
`;

t.test('backend = "kubernetes": the repo table over [defaults.kubernetes], with the defaults', async (t) => {
  const { registry, problems } = parse(WEB);
  t.same(problems, []);
  const [web, api] = registry.repos;
  t.same(web!.kubernetes, {
    cluster: { kind: 'context', context: 'prod', kubeconfig: '/etc/agent-runner/kube/config' },
    namespace: 'agent-runner-web',
    image: IMAGE,
    proxy: { ip: '10.0.0.5', port: 3128 },
    gitFetchUrl: 'git://10.0.0.5:9418/repos.git',
    gitPushUrl: 'https://10.0.0.5:8443/repos.git',
    workspaceBytes: 20 * 1024 ** 3,
    tmpBytes: 512 * 1024 ** 2,
    ttlSec: 600,
    cpuMax: '1500m',
    serviceAccount: 'worker',
  });
  t.equal(api!.kubernetes, undefined, 'no backend key: the host, whatever [defaults.kubernetes] says');
  const inCluster = parse(
    `${WEB}\n[repos.ops]\npath = "/ops"\nproxy_port = 702\nbackend = "kubernetes"\nkubernetes = { in_cluster = true, namespace = "ops" }\n`,
  );
  t.same(inCluster.problems, []);
  const ops = inCluster.registry.repos.find((repo) => repo.name === 'ops')!;
  t.same(ops.kubernetes!.cluster, { kind: 'in-cluster' }, "the repo's in_cluster overrides the default context");
  t.equal(ops.kubernetes!.ttlSec, 3600, 'the default TTL');
  t.equal(ops.kubernetes!.workspaceBytes, 10 * 1024 ** 3, 'the default workspace size');
});

t.test('every bad key at its own line, with the fix', async (t) => {
  const text = `[repos.web]
path = "/web"
proxy_port = 700
backend = "kubernetes"

[repos.web.kubernetes]
context = "prod"
in_cluster = true
namespace = "Agent_Runner"
image = "registry.example.com/worker:1.2"
proxy = "proxy.internal:3128"
git_fetch_url = "ftp://10.0.0.5/web.git"
git_push_url = "https://user:secret@10.0.0.5/web.git"
workspace_size = "1M"
ttl_sec = -1
cpu_max = "0"
service_account = "Worker!"
namespcae = "x"
`;
  const found = lines(text);
  const expected: readonly [number, string, RegExp][] = [
    [8, 'in_cluster', /context and in_cluster = true both say how to reach the cluster; keep one/],
    [9, 'namespace', /"Agent_Runner" is not a DNS-1123 label .*; write the repo's own namespace/],
    [10, 'image', /names a tag: a tag can be moved .*; pin the image by digest: image = /],
    [
      11,
      'proxy',
      /"proxy\.internal:3128" names a host, not an IP: the pods get no DNS; write the agent proxy's address/,
    ],
    [12, 'git_fetch_url', /has the scheme ftp; this endpoint takes git or http or https/],
    [13, 'git_push_url', /carries credentials: the per-task token is given to the pod, never written in the registry/],
    [14, 'workspace_size', /must be a size 64M-1T, got "1M"/],
    [15, 'ttl_sec', /must be a whole number of seconds 0-604800, got -1/],
    [16, 'cpu_max', /"0" is not a CPU quantity/],
    [17, 'service_account', /"Worker!" is not a DNS-1123 subdomain/],
    [18, 'namespcae', /unknown key; remove it; allowed keys in \[repos\.web\.kubernetes\]: context, in_cluster, /],
  ];
  for (const [line, key, message] of expected) {
    const hit = found.find((entry) => entry.startsWith(`r.toml:${line} repos.web.kubernetes.${key}: `));
    t.ok(hit, `line ${line}: ${key}`);
    t.match(hit ?? '', message, key);
  }
  t.equal(found.length, expected.length, found.join('\n'));
  t.equal(parse(text).registry.repos.length, 0, 'a repo with a bad key is not run');
});

t.test('what backend = "kubernetes" needs, and the values that are not right anywhere', async (t) => {
  const text = '[repos.web]\npath = "/web"\nproxy_port = 700\nbackend = "kubernetes"\n';
  const missing = lines(text);
  t.same(
    parse(text).problems.map((p) => `${p.file} ${p.key}`),
    ['context', 'namespace', 'image', 'proxy', 'git_fetch_url', 'git_push_url'].map(
      (key) => `r.toml:4 repos.web.kubernetes.${key}`,
    ),
    'each missing key, at the backend line',
  );
  t.match(
    missing[1],
    /backend = "kubernetes" needs namespace in \[repos\.web\.kubernetes\]; add namespace = "agent-runner-web"/,
  );
  t.match(
    lines('[repos.web]\npath = "/web"\nproxy_port = 700\nbackend = "k8s"\n')[0],
    /^r\.toml:4 repos\.web\.backend: must be "host" or "kubernetes", got "k8s"; write backend = "host"/,
  );
  t.match(
    lines('[defaults.kubernetes]\nnamespace = "shared"\n')[0],
    /^r\.toml:2 defaults\.kubernetes\.namespace: belongs to one repo: .*; move it to each \[repos\.NAME\.kubernetes\], one namespace per repo$/,
  );
  t.match(
    lines('[repos.web]\npath = "/web"\nproxy_port = 700\nkubernetes = 3\n')[0],
    /repos\.web\.kubernetes: must be a table; write it as a \[repos\.web\.kubernetes\] section/,
  );
  const image = (value: string) =>
    lines(`[repos.w]\npath = "/w"\nproxy_port = 700\n[repos.w.kubernetes]\nimage = "${value}"\n`);
  t.same(image(IMAGE), [], 'by digest');
  t.match(image(`registry.example.com/worker:1.2@${DIGEST}`)[0], /names a tag/, 'a tag beside the digest is refused');
  t.match(image('worker@sha256:abc')[0], /has a malformed digest/);
  const proxy = (value: string) =>
    lines(`[repos.w]\npath = "/w"\nproxy_port = 700\n[repos.w.kubernetes]\nproxy = "${value}"\n`);
  t.same(proxy('[fd00::5]:3128'), [], 'IPv6 in brackets');
  t.match(proxy('10.0.0.5')[0], /has no port/);
  t.match(proxy('http://10.0.0.5:3128')[0], /names a host, not an IP/);
  t.match(proxy('10.0.0.5:3128/x')[0], /is not written as IP:port alone/);
  t.same(image(`registry.example.com:5000/worker@${DIGEST}`), [], "a registry's port is not a tag");
  t.match(proxy('10.0.0.300:3128')[0], /is not IP:port/);
});

t.test("the agent's credential: a Secret of the operator's and its keys, both or neither", async (t) => {
  const table = (keys: string) =>
    `${WEB}\n[repos.ops]\npath = "/ops"\nproxy_port = 702\nbackend = "kubernetes"\n[repos.ops.kubernetes]\nnamespace = "ops"\n${keys}`;
  const ok = parse(table('agent_secret = "claude-login"\nagent_secret_keys = ["ANTHROPIC_API_KEY"]\n'));
  t.same(ok.problems, []);
  t.same(ok.registry.repos.find((repo) => repo.name === 'ops')!.kubernetes!.agentSecret, {
    name: 'claude-login',
    keys: ['ANTHROPIC_API_KEY'],
  });
  t.match(lines(table('agent_secret = "claude-login"\n')), [
    /repos\.ops\.kubernetes\.agent_secret: agent_secret needs agent_secret_keys in \[repos\.ops\.kubernetes\]; add agent_secret_keys = \["KEY", \.\.\.\]/,
  ]);
  t.match(lines(table('agent_secret_keys = ["A"]\n')), [/agent_secret_keys: agent_secret_keys needs agent_secret/]);
  t.match(
    lines(table('agent_secret = "Claude Login"\nagent_secret_keys = ["A"]\n'))[0],
    /agent_secret: "Claude Login" is not a Secret name/,
  );
  for (const [keys, problem] of [
    ['[]', /must be a list of variable names, got \[\]/],
    ['["A-B"]', /"A-B" is not a variable name/],
    ['["AGENT_RUNNER_PUSH_TOKEN"]', /"AGENT_RUNNER_PUSH_TOKEN" is a variable the Job sets itself/],
    ['["HOME"]', /"HOME" is a variable the Job sets itself/],
  ] as const)
    t.match(
      lines(table(`agent_secret = "claude-login"\nagent_secret_keys = ${keys}\n`))[0],
      problem,
      `agent_secret_keys = ${keys}`,
    );
});

t.test('one namespace per repo', async (t) => {
  const text = `${WEB}\n[repos.ops]\npath = "/ops"\nproxy_port = 702\nbackend = "kubernetes"\n\n[repos.ops.kubernetes]\nnamespace = "agent-runner-web"\n`;
  const found = lines(text);
  t.equal(found.length, 1);
  t.match(
    found[0],
    /^r\.toml:\d+ repos\.ops\.kubernetes\.namespace: namespace "agent-runner-web" is already used by repo "web": .*; give every repo its own namespace, e.g\. namespace = "agent-runner-ops"$/,
  );
});

t.test('provisioning rewrites the section and keeps backend and the kubernetes table', async (t) => {
  const rewritten = upsertRepo(WEB, { name: 'web', path: '/web', proxyPort: 700, limits: { memory_max: '4G' } });
  t.match(rewritten, /backend = "kubernetes"\n/);
  t.match(
    rewritten,
    /\[repos\.web\.kubernetes\]\nnamespace = "agent-runner-web"\nworkspace_size = "20G"\ntmp_size = "512M"\nttl_sec = 600\ncpu_max = "1500m"\nservice_account = "worker"\n/,
  );
  t.same(parse(rewritten).registry.repos[0]!.kubernetes, parse(WEB).registry.repos[0]!.kubernetes);
});

t.test("doctor: tasks_max is a warning; the runner's kubeconfig private, holding the context", async (t) => {
  const web = parse(WEB).registry.repos[0]!;
  const kubernetes = web.kubernetes!;
  const limits = podLimitsCheck(web, kubernetes);
  t.equal(limits.ok, true);
  t.equal(limits.warn, true);
  t.match(
    limits.detail,
    /memory_max 4G is each pod's memory request and limit \(4Gi\), cpu_weight 100 its CPU request \(1000m\), CPU limit 1500m; tasks_max 1024 has no per-pod equivalent/,
  );
  t.match(limits.fix, /podPidsLimit: 1024/);
  const runner = { uid: 1001, home: '/home/agent-web' };
  const facts = (over: Partial<ClusterAccessFacts>): ClusterAccessFacts => ({
    runner,
    file: '/etc/agent-runner/kube/config',
    stat: { uid: 1001, mode: 0o100600, isFile: true },
    text: 'apiVersion: v1\nkind: Config\ncontexts:\n  - name: prod\n    context: { cluster: c, user: u }\n',
    ...over,
  });
  t.same(clusterAccessCheck(kubernetes, facts({})), {
    name: 'cluster credentials',
    ok: true,
    detail: '/etc/agent-runner/kube/config holds context "prod", readable by the runner alone',
    fix: '',
  });
  const failing: readonly [Partial<ClusterAccessFacts>, RegExp, RegExp][] = [
    [{ stat: undefined }, /does not exist/, /kubectl config view --minify --flatten --context prod/],
    [{ stat: { uid: 0, mode: 0o100600, isFile: true } }, /owned by uid 0, not the runner \(uid 1001\)/, /chown/],
    [{ stat: { uid: 1001, mode: 0o100644, isFile: true } }, /is mode 644: others can read/, /chmod 0600/],
    [{ text: 'contexts:\n  - name: staging\n' }, /has no context "prod" \(it has: staging\)/, /add it/],
    [{ text: '{{' }, /is not YAML/, /write a kubeconfig/],
    [{ text: undefined }, /cannot be read as a regular file/, /plain file/],
  ];
  for (const [over, detail, fix] of failing) {
    const check = clusterAccessCheck(kubernetes, facts(over));
    t.equal(check.ok, false, check.detail);
    t.match(check.detail, detail);
    t.match(check.fix, fix);
  }
  t.equal(kubeconfigFile({ kind: 'context', context: 'prod' }, '/home/agent-web'), '/home/agent-web/.kube/config');
  const inCluster = { ...kubernetes, cluster: { kind: 'in-cluster' as const } };
  t.equal(clusterAccessCheck(inCluster, facts({ stat: undefined })).ok, false, 'in-cluster without a token');
  t.equal(clusterAccessCheck(inCluster, facts({})).ok, true);
});
