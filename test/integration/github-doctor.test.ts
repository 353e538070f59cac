// doctor's GitHub checks against the fake GitHub API (requests and answers
// checked against GitHub's OpenAPI description): the token read from the
// user's credential store without following links, read and push
// permission, the base branch and its protection, each failure with its fix.
import t from 'tap';
import { rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { gitHubFixture, type GitHubFixture } from '../helpers/github-fixture.js';
import { githubChecks } from '../../backends/host/doctor-github.js';
import { octokitConnector } from '../../src/github/octokit.js';
import { realPorts } from '../../src/io/real-ports.js';
import { parseRegistry } from '../../src/control/registry/parse.js';
import type { Check } from '../../backends/host/check.js';

function repoWith(f: GitHubFixture, extra: string) {
  const text = `[repos.widgets]\npath = "${f.workspace}"\nproxy_port = 700\nurl = "https://github.example.invalid/acme/widgets.git"\ngithub_api_url = "${f.apiUrl}"\n${extra}`;
  const { registry, problems } = parseRegistry(text, 'registry.toml', { isValid: () => true });
  if (problems.length) throw new Error(JSON.stringify(problems));
  return registry.repos[0]!;
}

async function doctor(
  f: GitHubFixture,
  extra = 'promote = "pr"\n',
  home = f.env.HOME!,
): Promise<{ checks: Check[]; byName: Map<string, Check> }> {
  const repo = repoWith(f, extra);
  const checks = await githubChecks(
    { fs: realPorts().fs, github: octokitConnector(), onWait: () => undefined },
    { repo, home, originUrl: repo.url },
  );
  return { checks, byName: new Map(checks.map((check) => [check.name, check])) };
}

t.test('a token that can do everything, on a protected base with required checks', async (t) => {
  const f = await gitHubFixture(t);
  f.fake.protectedBranches.set('main', ['ci', 'lint']);
  const { checks, byName } = await doctor(f);
  t.same(
    checks.filter((check) => !check.ok),
    [],
    'every check passes',
  );
  t.match(byName.get('GitHub origin')!.detail, /acme\/widgets on github\.example\.invalid/);
  t.match(
    byName.get('base protection fits promote')!.detail,
    /main is protected; required checks: ci, lint; promote = "pr"/,
  );
  t.match(byName.get('token can push auto/work')!.detail, /push permission on acme\/widgets/);
  t.notMatch(JSON.stringify(checks), /ghp_/, 'the token is in no detail');
  t.same(f.fake.problems, []);
});

t.test('a token without push permission: named, with the fix', async (t) => {
  const f = await gitHubFixture(t);
  f.fake.permissions = { ...f.fake.permissions, push: false };
  const { byName } = await doctor(f);
  const push = byName.get('token can push auto/work')!;
  t.equal(push.ok, false);
  t.match(push.detail, /no push permission on acme\/widgets \(missing: Contents: write\)/);
  t.match(push.fix, /Contents: read and write/);
});

t.test('a protected base with promote = "push" fails and says to use a pull request', async (t) => {
  const f = await gitHubFixture(t);
  f.fake.protectedBranches.set('main', []);
  const { byName } = await doctor(f, '');
  const fits = byName.get('base protection fits promote')!;
  t.equal(fits.ok, false);
  t.match(fits.detail, /main is protected; no required checks; promote = "push"/);
  t.match(fits.fix, /promote = "pr"/);
});

t.test('a missing base branch', async (t) => {
  const f = await gitHubFixture(t);
  const { byName } = await doctor(f, 'promote = "pr"\nbase = "trunk"\n');
  t.equal(byName.get('base branch exists on GitHub')!.ok, false);
  t.match(byName.get('base branch exists on GitHub')!.detail, /no branch trunk in acme\/widgets/);
});

t.test("a wrong token: GitHub's answer and the request", async (t) => {
  const f = await gitHubFixture(t);
  writeFileSync(path.join(f.env.HOME!, '.git-credentials'), 'https://x-access-token:wrong@github.example.invalid\n', {
    mode: 0o600,
  });
  const { byName } = await doctor(f);
  const read = byName.get('token can read the repo')!;
  t.equal(read.ok, false);
  t.match(read.detail, /GitHub answered 404 to GET \/repos\/acme\/widgets: Bad credentials/);
  t.match(read.fix, /Contents and Pull requests: read/);
});

t.test('no token stored, and a credential store that is a link (never followed)', async (t) => {
  const f = await gitHubFixture(t);
  const file = path.join(f.env.HOME!, '.git-credentials');
  rmSync(file);
  let { byName } = await doctor(f);
  t.equal(byName.get('GitHub token stored')!.ok, false);
  t.match(byName.get('GitHub token stored')!.fix, /git credential approve/);
  const elsewhere = path.join(path.dirname(f.env.HOME!), 'elsewhere');
  writeFileSync(elsewhere, 'https://x:secret@github.example.invalid\n');
  symlinkSync(elsewhere, file);
  ({ byName } = await doctor(f));
  t.equal(byName.get('GitHub token stored')!.ok, false);
  t.match(byName.get('GitHub token stored')!.detail, /link/);
  t.equal(f.fake.requests.length, 0, 'no request without a token read safely');
});

t.test('a credential store others can read is flagged', async (t) => {
  const f = await gitHubFixture(t);
  const { chmodSync } = await import('node:fs');
  chmodSync(path.join(f.env.HOME!, '.git-credentials'), 0o644);
  const { byName } = await doctor(f);
  t.equal(byName.get('credential store is private')!.ok, false);
});
