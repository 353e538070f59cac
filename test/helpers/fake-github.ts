// A local HTTP server (127.0.0.1 only) that answers the REST endpoints
// agent-runner uses the way GitHub does. Every request it receives and every
// answer it gives is checked against GitHub's OpenAPI description
// (openapi.ts); a mismatch is recorded in `problems` (tests assert it stays
// empty) and a bad request is answered 400 so the client sees it too.
// Branch heads come from the test (usually the real bare origin's refs), so
// "the head moved" is a real push, not a flag.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import {
  componentSchema,
  exampleOf,
  findOperation,
  merged,
  requestErrors,
  responseErrors,
  type MatchedOperation,
} from './openapi.js';

export interface FakeCheck {
  readonly name: string;
  /** queued | in_progress | completed */
  readonly status: string;
  readonly conclusion: string | null;
}

export interface FakePull {
  number: number;
  head: string;
  base: string;
  title: string;
  body: string;
  state: 'open' | 'closed';
  merged: boolean;
  mergeable: boolean | null;
}

export interface FakeGitHubOptions {
  readonly owner: string;
  readonly repo: string;
  readonly token: string;
  /** The sha of a branch on the remote, undefined when it does not exist. */
  readonly branchSha: (branch: string) => string | undefined;
  /** Performs a merge on the remote (the test's bare origin); returns the new base sha. */
  readonly merge: (base: string, head: string, method: string) => string;
  /** Path prefix of the API (GitHub Enterprise: /api/v3). */
  readonly prefix?: string;
}

export interface LoggedRequest {
  readonly method: string;
  readonly path: string;
  readonly operationId: string | undefined;
  readonly body: unknown;
  readonly status: number;
}

const isoNow = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

export class FakeGitHub {
  readonly problems: string[] = [];
  readonly requests: LoggedRequest[] = [];
  readonly pulls: FakePull[] = [];
  /** Check runs and statuses by commit sha. */
  readonly checks = new Map<string, FakeCheck[]>();
  readonly statuses = new Map<string, { context: string; state: string }[]>();
  permissions = { admin: false, maintain: false, push: true, triage: true, pull: true };
  protectedBranches = new Map<string, readonly string[]>();
  /** Answer the next request to this operation with a primary rate limit that resets in `resetInSec`. */
  rateLimitNext: { operationId: string; resetInSec: number } | undefined;
  /** Runs just before a merge is decided (a test moves the head here). */
  beforeMerge: (() => void) | undefined;
  /** When false, creating a pull request answers 403 like a token without that permission. */
  canWrite = true;
  /** The next pull request listing misses every pull (a PR opened between our look and our create). */
  hideFromListOnce = false;
  /** When set, every PR's head is this sha (GitHub's view moved away from the test's origin). */
  headOverride: string | undefined;
  private server: http.Server | undefined;
  baseUrl = '';

  constructor(private readonly options: FakeGitHubOptions) {}

  async start(t: Test): Promise<string> {
    this.server = http.createServer((request, response) => void this.handle(request, response));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => this.server!.close(() => resolve())));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${this.options.prefix ?? ''}`;
    return this.baseUrl;
  }

  private html(path: string): string {
    return `https://github.example.invalid/${this.options.owner}/${this.options.repo}${path}`;
  }

  pullJson(pull: FakePull, simple = false): unknown {
    const sha = this.headSha(pull);
    const ref = (branch: string, at: string) => ({ label: `${this.options.owner}:${branch}`, ref: branch, sha: at });
    const base = exampleOf(componentSchema(simple ? 'pull-request-simple' : 'pull-request'));
    return merged(base, {
      number: pull.number,
      id: 1000 + pull.number,
      html_url: this.html(`/pull/${pull.number}`),
      url: `${this.baseUrl}/repos/${this.options.owner}/${this.options.repo}/pulls/${pull.number}`,
      state: pull.state,
      title: pull.title,
      body: pull.body,
      head: ref(pull.head, sha),
      base: ref(pull.base, this.options.branchSha(pull.base) ?? ''),
      ...(simple
        ? { merged_at: pull.merged ? isoNow() : null }
        : {
            merged: pull.merged,
            mergeable: pull.mergeable,
            mergeable_state: pull.mergeable === false ? 'dirty' : pull.mergeable === null ? 'unknown' : 'clean',
          }),
    });
  }

  private headSha(pull: FakePull): string {
    return this.headOverride ?? this.options.branchSha(pull.head) ?? '0'.repeat(40);
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const prefix = this.options.prefix ?? '';
    const pathname = url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) : url.pathname;
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const method = request.method ?? 'GET';
    const match = findOperation(method, pathname);
    const answer = (status: number, json: unknown, headers: Record<string, string> = {}) => {
      if (match)
        for (const problem of responseErrors(match, status, json))
          this.problems.push(`answer to ${method} ${pathname}: ${problem}`);
      this.requests.push({
        method,
        path: `${pathname}${url.search}`,
        operationId: match?.operation.operationId,
        body,
        status,
      });
      response.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'x-github-media-type': 'github.v3',
        ...headers,
      });
      response.end(json === undefined ? '' : JSON.stringify(json));
    };
    const error = (
      status: number,
      message: string,
      extra: Record<string, unknown> = {},
      headers: Record<string, string> = {},
    ) => answer(status, { message, documentation_url: 'https://docs.github.com/rest', ...extra }, headers);
    if (!match) {
      this.problems.push(`${method} ${pathname} is not an operation of GitHub's REST API`);
      return error(404, 'Not Found');
    }
    const invalid = requestErrors(match, url.searchParams, body);
    if (invalid.length) {
      this.problems.push(...invalid.map((problem) => `request ${method} ${pathname}: ${problem}`));
      return error(400, `request does not match GitHub's description: ${invalid.join('; ')}`);
    }
    if (
      request.headers.authorization !== `token ${this.options.token}` &&
      request.headers.authorization !== `Bearer ${this.options.token}`
    ) {
      return match.operation.responses['401'] || match.operation.responses['403'] || match.operation.responses['404']
        ? error(match.operation.responses['404'] ? 404 : 403, 'Bad credentials')
        : error(404, 'Not Found');
    }
    const { owner, repo } = match.params;
    if (owner !== this.options.owner || repo !== this.options.repo) return error(404, 'Not Found');
    const id = match.operation.operationId;
    if (this.rateLimitNext?.operationId === id) {
      const reset = Math.floor(Date.now() / 1000) + this.rateLimitNext.resetInSec;
      this.rateLimitNext = undefined;
      return error(
        403,
        'API rate limit exceeded for user ID 1.',
        {},
        {
          'x-ratelimit-limit': '5000',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-used': '5000',
          'x-ratelimit-reset': String(reset),
          'x-ratelimit-resource': 'core',
        },
      );
    }
    this.route(match, id, url.searchParams, body as Record<string, unknown> | undefined, answer, error);
  }

  private route(
    match: MatchedOperation,
    id: string,
    query: URLSearchParams,
    body: Record<string, unknown> | undefined,
    answer: (status: number, json: unknown) => void,
    error: (status: number, message: string, extra?: Record<string, unknown>) => void,
  ): void {
    const { owner, repo } = this.options;
    switch (id) {
      case 'repos/get':
        return answer(
          200,
          merged(exampleOf(componentSchema('full-repository')), {
            name: repo,
            full_name: `${owner}/${repo}`,
            default_branch: 'main',
            html_url: this.html(''),
            permissions: this.permissions,
          }),
        );
      case 'repos/get-branch': {
        const name = match.params.branch!;
        const sha = this.options.branchSha(name);
        if (!sha) return error(404, 'Branch not found');
        const required = this.protectedBranches.get(name);
        const protection = required
          ? {
              enabled: true,
              required_status_checks: {
                enforcement_level: 'everyone',
                contexts: [...required],
                checks: required.map((context) => ({ context, app_id: null })),
              },
            }
          : { enabled: false, required_status_checks: { enforcement_level: 'off', contexts: [], checks: [] } };
        return answer(
          200,
          merged(exampleOf(componentSchema('branch-with-protection')), {
            name,
            commit: merged(exampleOf(componentSchema('commit')), { sha }),
            protected: Boolean(required),
            protection,
            protection_url: this.html(`/branches/${name}/protection`),
          }),
        );
      }
      case 'pulls/list': {
        const head = query.get('head');
        const base = query.get('base');
        const state = query.get('state') ?? 'open';
        const hidden = this.hideFromListOnce;
        this.hideFromListOnce = false;
        const found = hidden
          ? []
          : this.pulls.filter(
              (pull) =>
                (state === 'all' || pull.state === state) &&
                (!head || `${owner}:${pull.head}` === head) &&
                (!base || pull.base === base),
            );
        return answer(
          200,
          found.map((pull) => this.pullJson(pull, true)),
        );
      }
      case 'pulls/create': {
        if (!this.canWrite) return error(403, 'Resource not accessible by personal access token');
        const head = String(body?.head);
        const base = String(body?.base);
        if (!this.options.branchSha(head))
          return error(422, 'Validation Failed', {
            errors: [{ resource: 'PullRequest', field: 'head', code: 'invalid' }],
          });
        if (this.pulls.some((pull) => pull.state === 'open' && pull.head === head && pull.base === base)) {
          return error(422, 'Validation Failed', {
            errors: [
              {
                resource: 'PullRequest',
                code: 'custom',
                message: `A pull request already exists for ${owner}:${head}.`,
              },
            ],
          });
        }
        const pull: FakePull = {
          number: this.pulls.length + 1,
          head,
          base,
          title: String(body?.title ?? ''),
          body: String(body?.body ?? ''),
          state: 'open',
          merged: false,
          mergeable: true,
        };
        this.pulls.push(pull);
        return answer(201, this.pullJson(pull));
      }
      case 'pulls/get':
      case 'pulls/update':
      case 'pulls/merge': {
        const pull = this.pulls.find((entry) => entry.number === Number(match.params.pull_number));
        if (!pull) return error(404, 'Not Found');
        if (id === 'pulls/get') return answer(200, this.pullJson(pull));
        if (!this.canWrite) return error(403, 'Resource not accessible by personal access token');
        if (id === 'pulls/update') {
          if (typeof body?.title === 'string') pull.title = body.title;
          if (typeof body?.body === 'string') pull.body = body.body;
          return answer(200, this.pullJson(pull));
        }
        this.beforeMerge?.();
        if (pull.state !== 'open' || pull.mergeable !== true) return error(405, 'Pull Request is not mergeable');
        if (body?.sha !== undefined && body.sha !== this.headSha(pull))
          return error(409, 'Head branch was modified. Review and try the merge again.');
        const sha = this.options.merge(pull.base, pull.head, String(body?.merge_method ?? 'merge'));
        pull.state = 'closed';
        pull.merged = true;
        return answer(200, { sha, merged: true, message: 'Pull Request successfully merged' });
      }
      case 'checks/list-for-ref': {
        const runs = (this.checks.get(match.params.ref!) ?? []).map((check, i) =>
          merged(exampleOf(componentSchema('check-run')), {
            id: i + 1,
            name: check.name,
            head_sha: match.params.ref,
            status: check.status,
            conclusion: check.conclusion,
            html_url: this.html(`/runs/${i + 1}`),
            started_at: isoNow(),
            completed_at: check.status === 'completed' ? isoNow() : null,
          }),
        );
        return answer(200, { total_count: runs.length, check_runs: runs });
      }
      case 'repos/get-combined-status-for-ref': {
        const statuses = (this.statuses.get(match.params.ref!) ?? []).map((status, i) =>
          merged(exampleOf(componentSchema('simple-commit-status')), {
            id: i + 1,
            context: status.context,
            state: status.state,
            target_url: this.html(`/status/${i + 1}`),
          }),
        );
        const state = statuses.some(
          (status) =>
            (status as { state: string }).state === 'failure' || (status as { state: string }).state === 'error',
        )
          ? 'failure'
          : statuses.some((status) => (status as { state: string }).state === 'pending')
            ? 'pending'
            : 'success';
        return answer(
          200,
          merged(exampleOf(componentSchema('combined-commit-status')), {
            state,
            sha: match.params.ref,
            total_count: statuses.length,
            statuses,
            repository: merged(exampleOf(componentSchema('minimal-repository')), {
              name: repo,
              full_name: `${owner}/${repo}`,
            }),
          }),
        );
      }
      default:
        this.problems.push(`the fake does not answer ${id}`);
        return error(404, 'Not Found');
    }
  }
}
