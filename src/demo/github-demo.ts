// `demo --github`: after the demo's drain, promote through a pull request
// against a local GitHub (127.0.0.1): open the PR from auto/work, try to
// merge while CI is still running (that waits: exit 75 in the CLI), let CI
// pass, merge with the expected head sha, and see origin's main move. The
// token goes through the real path: a git credential store in the demo home.
import * as path from 'node:path';
import type { Ports } from '../ports.js';
import type { Git } from '../git/git.js';
import type { GitHubConnector } from '../github/api.js';
import type { StartDemoGitHub } from './github-server.js';
import { credentialFillCommand, passwordFromFill } from '../github/credential.js';
import { parseOrigin } from '../github/origin.js';
import {
  mergePullRequest,
  MergeNotDoneError,
  syncPullRequest,
  type PullRequestMerge,
  type PullRequestSync,
} from '../staging/pull-request.js';
import { resolveCommit } from '../git/refs.js';
import { FailedError } from '../errors.js';

export interface GitHubDemoResult {
  readonly opened: PullRequestSync;
  readonly waited: string;
  readonly merged: PullRequestMerge;
  readonly baseBefore: string;
  readonly baseAfter: string;
}

const DEMO_HOST = 'github.demo.invalid';
const DEMO_TOKEN = 'demo-token-not-a-secret';

export async function runGitHubDemo(
  ports: Ports,
  git: Git,
  demo: { readonly root: string; readonly clone: string; readonly home: string; readonly state: string },
  github: { readonly connector: GitHubConnector; readonly start: StartDemoGitHub },
  onStep: (text: string) => void,
): Promise<GitHubDemoResult> {
  const bare = path.join(demo.root, 'origin.git');
  const url = `https://${DEMO_HOST}/demo/project.git`;
  // The clone names a GitHub URL; git sends it to the local bare origin.
  await git.run(demo.clone, ['remote', 'set-url', 'origin', url]);
  await git.run(demo.clone, ['config', `url.${bare}.insteadOf`, url]);
  await ports.fs.writeAtomic(path.join(demo.home, '.gitconfig'), '[credential]\n\thelper = store\n', 0o600);
  await ports.fs.writeAtomic(
    path.join(demo.home, '.git-credentials'),
    `https://x-access-token:${DEMO_TOKEN}@${DEMO_HOST}\n`,
    0o600,
  );
  const origin = parseOrigin(url)!;
  const fill = await ports.process.run(credentialFillCommand(origin.host, demo.home));
  const token = passwordFromFill(fill.stdout);
  if (!token) throw new FailedError(`demo: git credential fill found no token in ${demo.home}: ${fill.stderr.trim()}`);

  const server = await github.start({
    owner: origin.owner,
    repo: origin.repo,
    token,
    remote: {
      branchSha: (branch) => resolveCommit(git, bare, `refs/heads/${branch}`),
      merge: async (base, head) => {
        const tree = (await git.run(bare, ['rev-parse', `refs/heads/${head}^{tree}`])).trim();
        const commit = (
          await git.run(bare, [
            'commit-tree',
            tree,
            '-p',
            `refs/heads/${base}`,
            '-p',
            `refs/heads/${head}`,
            '-m',
            `Merge pull request from ${head}`,
          ])
        ).trim();
        await git.run(bare, ['update-ref', `refs/heads/${base}`, commit]);
        return commit;
      },
    },
  });
  try {
    onStep(
      `local GitHub API at ${server.baseUrl} for ${origin.owner}/${origin.repo}; main is protected and requires "demo-ci"`,
    );
    const api = github.connector.connect({ baseUrl: server.baseUrl, token, onWait: onStep });
    const target = { api, slug: { owner: origin.owner, repo: origin.repo } };
    const lifecycle = { ports, git, workspace: demo.clone, baseBranch: 'main', stateDir: demo.state, fetch: true };
    const baseBefore = (await resolveCommit(git, bare, 'refs/heads/main'))!;
    const { status: _status, raw: _raw, ...opened } = await syncPullRequest(lifecycle, target);
    onStep(`promote --pr: ${opened.detail}`);
    const head = opened.stagingSha!;
    server.setCheck(head, 'in_progress', null);
    let waited = '';
    try {
      await mergePullRequest(lifecycle, target, 'merge');
      throw new FailedError('demo: the merge went ahead while demo-ci was still running');
    } catch (error) {
      if (!(error instanceof MergeNotDoneError) || error.exitCode !== 75) throw error;
      waited = error.message;
      onStep(`promote --pr --merge (CI running, exit 75): ${waited}`);
    }
    server.setCheck(head, 'completed', 'success');
    const merged = await mergePullRequest(lifecycle, target, 'merge');
    onStep(`promote --pr --merge (CI green): ${merged.detail}`);
    const baseAfter = (await resolveCommit(git, bare, 'refs/heads/main'))!;
    return { opened, waited, merged, baseBefore, baseAfter };
  } finally {
    await server.close();
  }
}
