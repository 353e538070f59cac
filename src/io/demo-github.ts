// The local GitHub of `demo --github`: an HTTP server on 127.0.0.1 (an
// ephemeral port, never another interface) answering the endpoints promote
// --pr uses, with GitHub's shapes for the fields agent-runner reads. The
// tests use a stricter fake that checks every request and answer against
// GitHub's OpenAPI description (test/helpers/fake-github.ts).
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DemoGitHubServer, StartDemoGitHub } from '../demo/github-server.js';

interface Pull {
  number: number;
  head: string;
  base: string;
  title: string;
  body: string;
  state: 'open' | 'closed';
  merged: boolean;
}

export const startDemoGitHub: StartDemoGitHub = async ({ owner, repo, token, remote }) => {
  const pulls: Pull[] = [];
  const checks = new Map<string, { status: string; conclusion: string | null }>();
  const html = (suffix: string) => `https://github.demo.invalid/${owner}/${repo}${suffix}`;
  const pullJson = async (pull: Pull) => ({
    number: pull.number,
    html_url: html(`/pull/${pull.number}`),
    state: pull.state,
    merged: pull.merged,
    merged_at: pull.merged ? new Date().toISOString() : null,
    mergeable: pull.state === 'open' ? true : null,
    mergeable_state: 'clean',
    title: pull.title,
    body: pull.body,
    head: { ref: pull.head, sha: (await remote.branchSha(pull.head)) ?? '', label: `${owner}:${pull.head}` },
    base: { ref: pull.base, sha: (await remote.branchSha(pull.base)) ?? '', label: `${owner}:${pull.base}` },
  });
  const route = async (method: string, url: URL, body: Record<string, unknown>): Promise<[number, unknown]> => {
    const prefix = `/repos/${owner}/${repo}`;
    if (!url.pathname.startsWith(prefix)) return [404, { message: 'Not Found' }];
    const rest = url.pathname.slice(prefix.length);
    if (method === 'GET' && rest === '/pulls') {
      const head = url.searchParams.get('head');
      return [
        200,
        await Promise.all(
          pulls.filter((pull) => pull.state === 'open' && (!head || head === `${owner}:${pull.head}`)).map(pullJson),
        ),
      ];
    }
    if (method === 'POST' && rest === '/pulls') {
      if (pulls.some((pull) => pull.state === 'open' && pull.head === body.head))
        return [
          422,
          {
            message: 'Validation Failed',
            errors: [{ message: `A pull request already exists for ${owner}:${String(body.head)}.` }],
          },
        ];
      const pull: Pull = {
        number: pulls.length + 1,
        head: String(body.head),
        base: String(body.base),
        title: String(body.title),
        body: String(body.body ?? ''),
        state: 'open',
        merged: false,
      };
      pulls.push(pull);
      return [201, await pullJson(pull)];
    }
    const one = /^\/pulls\/(\d+)(\/merge)?$/.exec(rest);
    const pull = one ? pulls.find((entry) => entry.number === Number(one[1])) : undefined;
    if (one && !pull) return [404, { message: 'Not Found' }];
    if (pull && method === 'GET' && !one![2]) return [200, await pullJson(pull)];
    if (pull && method === 'PATCH') {
      pull.title = String(body.title ?? pull.title);
      pull.body = String(body.body ?? pull.body);
      return [200, await pullJson(pull)];
    }
    if (pull && method === 'PUT' && one![2]) {
      if (body.sha !== (await remote.branchSha(pull.head)))
        return [409, { message: 'Head branch was modified. Review and try the merge again.' }];
      const sha = await remote.merge(pull.base, pull.head);
      pull.state = 'closed';
      pull.merged = true;
      return [200, { sha, merged: true, message: 'Pull Request successfully merged' }];
    }
    const branch = /^\/branches\/(.+)$/.exec(rest);
    if (branch && method === 'GET') {
      const sha = await remote.branchSha(decodeURIComponent(branch[1]!));
      return sha
        ? [
            200,
            {
              name: decodeURIComponent(branch[1]!),
              commit: { sha },
              protected: true,
              protection: { required_status_checks: { contexts: ['demo-ci'], checks: [] } },
            },
          ]
        : [404, { message: 'Branch not found' }];
    }
    const ref = /^\/commits\/([0-9a-f]{40})\/(check-runs|status)$/.exec(rest);
    if (ref && method === 'GET') {
      const check = checks.get(ref[1]!);
      if (ref[2] === 'status') return [200, { state: 'pending', sha: ref[1], statuses: [], total_count: 0 }];
      return [
        200,
        {
          total_count: check ? 1 : 0,
          check_runs: check
            ? [
                {
                  id: 1,
                  name: 'demo-ci',
                  head_sha: ref[1],
                  status: check.status,
                  conclusion: check.conclusion,
                  html_url: html('/actions/runs/1'),
                },
              ]
            : [],
        },
      ];
    }
    return [404, { message: 'Not Found' }];
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        let status: number;
        let answer: unknown;
        try {
          if (request.headers.authorization !== `token ${token}`)
            [status, answer] = [401, { message: 'Bad credentials' }];
          else {
            const text = Buffer.concat(chunks).toString('utf8');
            [status, answer] = await route(
              request.method ?? 'GET',
              new URL(request.url ?? '/', 'http://127.0.0.1'),
              text ? (JSON.parse(text) as Record<string, unknown>) : {},
            );
          }
        } catch (error) {
          [status, answer] = [500, { message: (error as Error).message }];
        }
        response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
        response.end(JSON.stringify(answer));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const handle: DemoGitHubServer = {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setCheck: (sha, status, conclusion) => void checks.set(sha, { status, conclusion }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return handle;
};
