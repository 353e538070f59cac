// The real GitHub port: @octokit/rest with the throttling and retry plugins.
// Only the composition root (src/main.ts) and tests construct it; core code
// sees the GitHubApi interface. Network limits it lives with: a rate limit
// that names its reset is waited out, but only up to maxWaitSec, and every
// wait is reported through onWait (waiting is not failing); 5xx answers are
// retried a little; every other refusal becomes a GitHubRequestError with
// GitHub's message and the request, never the token.
import { Octokit } from '@octokit/rest';
import { throttling } from '@octokit/plugin-throttling';
import { retry } from '@octokit/plugin-retry';
import {
  type CommitCheck,
  type GitHubApi,
  type GitHubConnection,
  type GitHubConnector,
  type MergeAnswer,
  type PullRequest,
  type RepoSlug,
  GitHubRequestError,
} from './api.js';
import { EXIT } from '../errors.js';
import { checkRunState, statusState } from './merge-verdict.js';

const Client = Octokit.plugin(throttling, retry);
type Client = InstanceType<typeof Client>;

export interface OctokitOptions {
  /** The fetch to use (the composition root passes one that goes through the repo's proxy). */
  readonly fetch?: typeof fetch;
  /** The longest rate-limit wait taken before giving up (default 90 s). */
  readonly maxWaitSec?: number;
  readonly userAgent?: string;
}

/** A rate limit longer than we wait: the CLI turns it into "try again later" (exit 75). */
export class RateLimitedError extends GitHubRequestError {
  constructor(
    status: number,
    request: string,
    githubMessage: string,
    /** ISO time GitHub named for the reset, when it did. */
    readonly until: string | undefined,
  ) {
    super(
      status,
      request,
      `${githubMessage}; rate limited${until ? ` until ${until}` : ''}, longer than agent-runner waits: try again later`,
      EXIT.busy,
    );
    this.name = 'RateLimitedError';
  }
}

interface RequestLike {
  readonly method?: string;
  readonly url?: string;
  readonly [parameter: string]: unknown;
}

/** "POST /repos/acme/widgets/pulls": the method and path, with any {parameter} of a route filled in. */
function describeRequest(request: RequestLike | undefined): string {
  if (!request?.url) return 'a request';
  const filled = request.url.replace(/\{(\w+)\}/g, (whole, name: string) =>
    typeof request[name] === 'string' || typeof request[name] === 'number'
      ? encodeURIComponent(String(request[name]))
      : whole,
  );
  const url = new URL(filled, 'http://github.invalid');
  return `${request.method ?? 'GET'} ${url.pathname}`;
}

function wrapError(error: unknown): Error {
  if (error instanceof GitHubRequestError) return error;
  const failure = error as {
    status?: number;
    message?: string;
    request?: RequestLike;
    response?: { data?: unknown; headers?: Record<string, string | undefined> };
  };
  const data = failure.response?.data as
    { message?: string; errors?: { message?: string; code?: string }[] } | undefined;
  const details = (data?.errors ?? []).map((entry) => entry.message ?? entry.code).filter(Boolean);
  const message = data?.message
    ? `${data.message}${details.length ? ` (${details.join('; ')})` : ''}`
    : (failure.message ?? String(error));
  const headers = failure.response?.headers ?? {};
  if (
    (failure.status === 403 || failure.status === 429) &&
    (headers['x-ratelimit-remaining'] === '0' || headers['retry-after'] !== undefined || /rate limit/i.test(message))
  ) {
    const reset = Number(headers['x-ratelimit-reset']);
    return new RateLimitedError(
      failure.status,
      describeRequest(failure.request),
      message,
      Number.isFinite(reset) && reset > 0 ? new Date(reset * 1000).toISOString() : undefined,
    );
  }
  return new GitHubRequestError(
    typeof failure.status === 'number' ? failure.status : undefined,
    describeRequest(failure.request),
    message,
  );
}

async function call<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw wrapError(error);
  }
}

interface RawPull {
  number: number;
  html_url: string;
  state: string;
  merged?: boolean;
  merged_at?: string | null;
  mergeable?: boolean | null;
  mergeable_state?: string;
  head: { ref: string; sha: string };
  base: { ref: string };
  title: string;
  body?: string | null;
}

function toPull(raw: RawPull): PullRequest {
  return {
    number: raw.number,
    url: raw.html_url,
    state: raw.state === 'open' ? 'open' : 'closed',
    merged: raw.merged ?? Boolean(raw.merged_at),
    mergeable: raw.mergeable ?? null,
    mergeableState: raw.mergeable_state,
    headRef: raw.head.ref,
    headSha: raw.head.sha,
    baseRef: raw.base.ref,
    title: raw.title,
    body: raw.body ?? '',
  };
}

class OctokitGitHub implements GitHubApi {
  constructor(private readonly client: Client) {}

  getRepo(slug: RepoSlug) {
    return call(async () => {
      const { data } = await this.client.rest.repos.get({ owner: slug.owner, repo: slug.repo });
      const permissions = data.permissions
        ? { pull: data.permissions.pull, push: data.permissions.push, admin: data.permissions.admin }
        : undefined;
      return { fullName: data.full_name, defaultBranch: data.default_branch, permissions };
    });
  }

  getBranch(slug: RepoSlug, branch: string) {
    return call(async () => {
      try {
        const { data } = await this.client.rest.repos.getBranch({ ...slug, branch });
        const required = data.protection?.required_status_checks;
        const contexts = [...(required?.contexts ?? []), ...(required?.checks ?? []).map((check) => check.context)];
        return {
          name: data.name,
          sha: data.commit.sha,
          protected: data.protected,
          requiredChecks: [...new Set(contexts)],
        };
      } catch (error) {
        if ((error as { status?: number }).status === 404) return undefined;
        throw error;
      }
    });
  }

  findOpenPull(slug: RepoSlug, head: string, base: string) {
    return call(async () => {
      const { data } = await this.client.rest.pulls.list({
        ...slug,
        state: 'open',
        head: `${slug.owner}:${head}`,
        base,
        per_page: 10,
      });
      const found = data.find((pull) => pull.head.ref === head && pull.base.ref === base);
      return found ? this.getPull(slug, found.number) : undefined;
    });
  }

  createPull(slug: RepoSlug, head: string, base: string, text: { title: string; body: string }) {
    return call(async (): Promise<PullRequest | 'exists'> => {
      try {
        const { data } = await this.client.rest.pulls.create({
          ...slug,
          head,
          base,
          title: text.title,
          body: text.body,
          maintainer_can_modify: false,
        });
        return toPull(data as RawPull);
      } catch (error) {
        const failure = error as { status?: number; response?: { data?: { errors?: { message?: string }[] } } };
        if (
          failure.status === 422 &&
          (failure.response?.data?.errors ?? []).some((entry) => /already exists/i.test(entry.message ?? ''))
        )
          return 'exists';
        throw error;
      }
    });
  }

  updatePull(slug: RepoSlug, number: number, text: { title: string; body: string }) {
    return call(async () =>
      toPull(
        (await this.client.rest.pulls.update({ ...slug, pull_number: number, title: text.title, body: text.body }))
          .data as RawPull,
      ),
    );
  }

  getPull(slug: RepoSlug, number: number) {
    return call(async () =>
      toPull((await this.client.rest.pulls.get({ ...slug, pull_number: number })).data as RawPull),
    );
  }

  checksOn(slug: RepoSlug, sha: string) {
    return call(async () => {
      const runs = await this.client.paginate(this.client.rest.checks.listForRef, { ...slug, ref: sha, per_page: 100 });
      const { data: combined } = await this.client.rest.repos.getCombinedStatusForRef({
        ...slug,
        ref: sha,
        per_page: 100,
      });
      const checks: CommitCheck[] = runs.map((run) => ({
        name: run.name,
        kind: 'check-run',
        state: checkRunState(run.status, run.conclusion),
        conclusion: run.conclusion ?? run.status,
        url: run.html_url ?? undefined,
      }));
      for (const status of combined.statuses)
        checks.push({
          name: status.context,
          kind: 'status',
          state: statusState(status.state),
          conclusion: status.state,
          url: status.target_url ?? undefined,
        });
      return checks;
    });
  }

  mergePull(
    slug: RepoSlug,
    number: number,
    expectedHeadSha: string,
    method: 'merge' | 'squash' | 'rebase',
    text: { title: string; body: string },
  ) {
    return call(async (): Promise<MergeAnswer> => {
      try {
        const { data } = await this.client.rest.pulls.merge({
          ...slug,
          pull_number: number,
          sha: expectedHeadSha,
          merge_method: method,
          ...(method === 'rebase' ? {} : { commit_title: `${text.title} (#${number})` }),
        });
        return data.merged
          ? { merged: true, sha: data.sha, message: data.message }
          : { merged: false, status: 405, message: data.message };
      } catch (error) {
        const failure = error as { status?: number; response?: { data?: { message?: string } } };
        if (failure.status === 405 || failure.status === 409 || failure.status === 422)
          return { merged: false, status: failure.status, message: failure.response?.data?.message ?? 'refused' };
        throw error;
      }
    });
  }
}

/** The real connector. */
export function octokitConnector(options: OctokitOptions = {}): GitHubConnector {
  const maxWaitSec = options.maxWaitSec ?? 90;
  return {
    connect(connection: GitHubConnection): GitHubApi {
      const onLimit =
        (kind: string) => (retryAfter: number, request: RequestLike, _client: unknown, retryCount: number) => {
          const what = describeRequest(request);
          if (retryAfter > maxWaitSec || retryCount >= 2) return false;
          connection.onWait(`waiting ${retryAfter} s for GitHub's ${kind} on ${what} (GitHub said when to come back)`);
          return true;
        };
      const client = new Client({
        baseUrl: connection.baseUrl,
        ...(connection.token ? { auth: connection.token } : {}),
        userAgent: options.userAgent ?? 'agent-runner',
        ...(options.fetch ? { request: { fetch: options.fetch } } : {}),
        log: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
        throttle: { onRateLimit: onLimit('rate limit'), onSecondaryRateLimit: onLimit('secondary rate limit') },
        retry: { doNotRetry: [400, 401, 403, 404, 405, 409, 410, 422, 429, 451], retries: 2 },
      });
      return new OctokitGitHub(client);
    },
  };
}
