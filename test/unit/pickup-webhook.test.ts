// The push webhook's pure decisions (control/pickup/delivery.ts), the clone's
// origin read as data, and the registry's two webhook keys.
import t from 'tap';
import {
  admitHead,
  DeliveryMemory,
  judgeDelivery,
  judgePush,
  originUrlFromGitConfig,
  tooLarge,
  type DeliveryHead,
  type PushTarget,
} from '../../src/control/pickup/index.js';
import { parseOrigin } from '../../src/github/origin.js';
import { parseRegistry } from '../../src/control/registry/parse.js';
import { cronScheduler } from '../../src/io/cron.js';

const head = (overrides: Partial<DeliveryHead> = {}): DeliveryHead => ({
  method: 'POST',
  event: 'push',
  delivery: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
  signature: `sha256=${'0'.repeat(64)}`,
  contentLength: 1000,
  ...overrides,
});

const targets: PushTarget[] = [
  { name: 'web', baseBranch: 'main', enabled: true, origin: parseOrigin('https://github.com/Acme/Web.git') },
  { name: 'api', baseBranch: 'trunk', enabled: true, origin: parseOrigin('git@github.com:acme/api.git') },
  { name: 'old', baseBranch: 'main', enabled: false, origin: parseOrigin('https://github.com/acme/old') },
  { name: 'local', baseBranch: 'main', enabled: true, origin: undefined },
];

const push = (fullName: string, ref: string, host = 'github.com') => ({
  ref,
  after: 'f'.repeat(40),
  repository: {
    full_name: fullName,
    html_url: `https://${host}/${fullName}`,
    clone_url: `https://${host}/${fullName}.git`,
    ssh_url: `git@${host}:${fullName}.git`,
  },
});

t.test('before the body: method, size, signature', async (t) => {
  t.equal(admitHead(head()), undefined, 'a signed POST of a sane size is read');
  t.equal(admitHead(head({ contentLength: undefined })), undefined, 'no Content-Length: read up to the cap');
  t.equal(admitHead(head({ method: 'GET' }))?.status, 405);
  const big = admitHead(head({ contentLength: 4 * 1024 * 1024 + 1 }));
  t.equal(big?.status, 413);
  t.match(big?.message, /more than the 4194304 this receiver reads; nothing was read/);
  t.equal(admitHead(head({ contentLength: 2048 }), 1024)?.status, 413, 'the cap is the receiver’s');
  t.equal(admitHead(head({ signature: undefined }))?.status, 401, 'unsigned: refused before reading');
  t.equal(tooLarge(1024).status, 413);
});

t.test('after the body: signature, then replay, then the event', async (t) => {
  const judge = (overrides: Partial<Parameters<typeof judgeDelivery>[0]>) =>
    judgeDelivery({
      head: head(),
      verified: true,
      seen: false,
      payload: push('acme/web', 'refs/heads/main'),
      targets,
      ...overrides,
    });
  const rows: [string, Partial<Parameters<typeof judgeDelivery>[0]>, number, string[]][] = [
    ['a verified push to the base', {}, 200, ['web']],
    ['a bad signature', { verified: false }, 401, []],
    ['a bad signature on a replayed id is still 401', { verified: false, seen: true }, 401, []],
    ['a replay', { seen: true }, 409, []],
    ['no delivery id', { head: head({ delivery: undefined }) }, 400, []],
    ['a delivery id that is no GUID', { head: head({ delivery: '../../x' }) }, 400, []],
    ['ping', { head: head({ event: 'ping' }), payload: { zen: 'x' } }, 200, []],
    ['another event', { head: head({ event: 'issues' }) }, 202, []],
    ['no event header', { head: head({ event: undefined }) }, 202, []],
    ['a push to another branch', { payload: push('acme/web', 'refs/heads/feature') }, 202, []],
    ['a tag push', { payload: push('acme/web', 'refs/tags/main') }, 202, []],
    ['a push of an unregistered repository', { payload: push('acme/other', 'refs/heads/main') }, 202, []],
    ['the same name on another host', { payload: push('acme/web', 'refs/heads/main', 'ghe.example.com') }, 202, []],
    ['a disabled repo', { payload: push('acme/old', 'refs/heads/main') }, 202, []],
    ['a payload that is not JSON', { payload: undefined }, 400, []],
    ['a payload without a repository', { payload: { ref: 'refs/heads/main' } }, 400, []],
    [
      'the base of another repo, matched by its ssh origin',
      { payload: push('ACME/api', 'refs/heads/trunk') },
      200,
      ['api'],
    ],
  ];
  for (const [what, overrides, status, wake] of rows) {
    const verdict = judge(overrides);
    t.equal(verdict.status, status, `${what}: ${verdict.message}`);
    t.same(verdict.wake, wake, `${what}: wakes ${wake.join(', ') || 'nothing'}`);
  }
  t.match(judge({ verified: false }).message, /the webhook secret differs from the one webhook_secret_file holds/);
  t.match(judge({ seen: true }).message, /was received already: a replay wakes nothing/);
  t.match(
    judge({ payload: push('acme/web', 'refs/heads/feature') }).message,
    /refs\/heads\/feature is not the base branch of web \(main\)/,
  );
});

t.test('two registered repos of one GitHub repository and base are both woken', async (t) => {
  const twins: PushTarget[] = [
    { name: 'a', baseBranch: 'main', enabled: true, origin: parseOrigin('https://github.com/acme/web') },
    { name: 'b', baseBranch: 'main', enabled: true, origin: parseOrigin('ssh://git@github.com/acme/web.git') },
  ];
  t.same(judgePush(push('acme/web', 'refs/heads/main'), twins).wake, ['a', 'b']);
});

t.test('delivery ids: remembered, the oldest forgotten past the limit', async (t) => {
  const memory = new DeliveryMemory(3);
  for (const id of ['a', 'b', 'c', 'd']) memory.remember(id);
  t.notOk(memory.has('a'), 'the oldest went');
  t.ok(memory.has('b') && memory.has('d'));
});

t.test("the clone's origin from .git/config, as git writes it", async (t) => {
  const config = [
    '[core]',
    '\trepositoryformatversion = 0',
    '[remote "upstream"]',
    '\turl = https://github.com/other/x.git',
    '[remote "origin"]',
    '\tfetch = +refs/heads/*:refs/remotes/origin/*',
    '\turl = git@github.com:acme/web.git ; a comment',
    '[branch "main"]',
    '\tremote = origin',
  ].join('\n');
  t.equal(originUrlFromGitConfig(config), 'git@github.com:acme/web.git');
  t.equal(originUrlFromGitConfig('[remote "origin"]\n  URL = "https://github.com/a/b"\n'), 'https://github.com/a/b');
  t.equal(originUrlFromGitConfig('[remote "upstream"]\nurl = x\n'), undefined);
  t.equal(originUrlFromGitConfig(''), undefined);
});

t.test('registry: webhook_port and webhook_secret_file, in [defaults], both or neither', async (t) => {
  const parse = (defaults: string, repo = '') =>
    parseRegistry(
      `[defaults]\n${defaults}[repos.web]\npath = "/srv/web"\nproxy_port = 700\n${repo}`,
      'reg.toml',
      cronScheduler,
    );
  const said = (text: string, repo = '') =>
    parse(text, repo).problems.map((problem) => `${problem.file} ${problem.key}: ${problem.problem}; ${problem.fix}`);
  const good = parse('webhook_port = 690\nwebhook_secret_file = "/etc/agent-runner/webhook-secret"\n');
  t.same(good.problems, []);
  t.same(good.registry.webhook, { port: 690, secretFile: '/etc/agent-runner/webhook-secret' });
  t.equal(parse('').registry.webhook, undefined, 'none by default');
  t.same(said('webhook_port = 8080\nwebhook_secret_file = "/etc/s"\n'), [
    "reg.toml:2 defaults.webhook_port: must be a privileged port 1-1023, got 8080: any user, an agent too, could bind a port from 1024 up while the receiver is down and read every repo's pushes; e.g. webhook_port = 690 (below the ports provision hands out, 700 up), and point the reverse proxy at 127.0.0.1:690",
  ]);
  t.same(said('webhook_port = 690\n'), [
    'reg.toml:2 defaults.webhook_port: is set without webhook_secret_file: the receiver verifies every delivery with the secret; add webhook_secret_file = "/etc/agent-runner/webhook-secret" to [defaults] (the secret GitHub signs with)',
  ]);
  t.same(said('webhook_secret_file = "/etc/s"\n'), [
    'reg.toml:2 defaults.webhook_secret_file: is set without webhook_port: the receiver has nowhere to listen; add webhook_port = 690 to [defaults], or remove webhook_secret_file',
  ]);
  t.match(said('webhook_port = 690\nwebhook_secret_file = "s3cr3t-value"\n'), [
    /defaults\.webhook_secret_file: must be the absolute path of the file holding the secret, got a value that is not an absolute path; .*never the secret itself/,
  ]);
  t.same(said('webhook_port = 700\nwebhook_secret_file = "/etc/s"\n'), [
    'reg.toml:2 defaults.webhook_port: port 700 is already repo "web"\'s proxy_port; give the receiver a port of its own, e.g. webhook_port = 690',
  ]);
  t.same(said('webhook_port = 690\nwebhook_secret_file = "/etc/s"\n', 'metrics_port = 690\n'), [
    'reg.toml:2 defaults.webhook_port: port 690 is already repo "web"\'s metrics_port; give the receiver a port of its own, e.g. webhook_port = 690',
  ]);
  t.match(said('', 'webhook_port = 690\n'), [
    /repos\.web\.webhook_port: "webhook_port" belongs in \[defaults\], not in \[repos\.NAME\] \(one for the host\)/,
  ]);
});
