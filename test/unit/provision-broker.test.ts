// provision repo and a repo with a broker: broker_port comes from the proxy
// port pool for every repo a key file applies to, and only for those.
import t from 'tap';
import { planRepo } from '../../backends/host/provision-plan.js';
import { hostLayout } from '../../backends/host/layout.js';
import { parseRegistry } from '../../src/control/registry/parse.js';
import { cronScheduler } from '../../src/io/cron.js';
import { emptyRepoState } from '../helpers/host-fixtures.js';

const layout = hostLayout({ AGENT_RUNNER_CONFIG: '/cfg/registry.toml', AGENT_RUNNER_STATE: '/state' });
const request = { name: 'web', url: 'https://example.org/web.git', base: undefined, allow: undefined };
const written = (plan: ReturnType<typeof planRepo>) =>
  (plan.steps.find((step) => 'write' in step) as { write: { text: string } } | undefined)?.write.text;

t.test('a key file in [defaults.broker]: the new repo and an older one each get a broker_port', async (t) => {
  const registryText = `[defaults.broker]
anthropic_key_file = "/etc/agent-runner/keys/anthropic"

[repos.api]
path = "/srv/api"
url = "https://example.org/api.git"
proxy_port = 700
runner_proxy_port = 701
`;
  const plan = planRepo(request, { ...emptyRepoState(), registryText }, layout);
  const text = written(plan)!;
  const { registry, problems } = parseRegistry(text, 'r', cronScheduler);
  t.same(problems, []);
  t.same(
    registry.repos.map((repo) => [repo.name, repo.proxyPort, repo.runnerProxyPort, repo.broker?.port]),
    [
      ['api', 700, 701, 704],
      ['web', 702, 703, 705],
    ],
    'broker ports from the same pool, apart from every proxy port',
  );
  t.equal(
    plan.steps.map((step) => step.description).find((description) => description.startsWith('register')),
    'register repo web in /cfg/registry.toml (proxy port 702, runner proxy port 703, broker port 705, allow: nothing), mode 0600; broker port of repo api: 704 (its agents reach their model through the broker there); broker port of repo web: 705 (its agents reach their model through the broker there)',
  );
  t.ok(
    plan.checklist.includes(
      'put the provider key in /etc/agent-runner/keys/anthropic: one line, owned by agent-runner-broker, mode 0600 (docs/operations.md, "Provider keys and the broker"); the agent needs no login',
    ),
    'the checklist names the key file, not a login',
  );
  t.notOk(plan.checklist.some((item) => item.includes('claude /login')));
  const again = planRepo(request, { ...emptyRepoState(), registryText: text }, layout);
  t.equal(written(again), undefined, 'a second run leaves the registry as it is');
});

t.test("a key file in the repo's own table is kept, and a repo without one gets no broker_port", async (t) => {
  const registryText = `[repos.web]
path = "/srv/web"
url = "https://example.org/web.git"
proxy_port = 700
runner_proxy_port = 701

[repos.web.broker]
openai_key_file = "/etc/agent-runner/keys/web-openai"
max_body_bytes = 4096

[repos.api]
path = "/srv/api"
url = "https://example.org/api.git"
proxy_port = 702
runner_proxy_port = 703
`;
  const plan = planRepo(request, { ...emptyRepoState(), registryText }, layout);
  const text = written(plan)!;
  t.match(
    text,
    /\[repos\.web\]\n(?:.*\n)*broker_port = 704\n(?:.*\n)*\n\[repos\.web\.broker\]\nopenai_key_file = "\/etc\/agent-runner\/keys\/web-openai"\nmax_body_bytes = 4096\n/,
  );
  const repos = parseRegistry(text, 'r', cronScheduler).registry.repos;
  t.match(repos[0]!.broker, {
    port: 704,
    maxBodyBytes: 4096,
    providers: { openai: { keyFile: '/etc/agent-runner/keys/web-openai' } },
  });
  t.equal(repos[1]!.broker, undefined);
  t.notMatch(text, /\[repos\.api\][^[]*broker_port/, 'api has no key file: no broker port');
});
