// The GitHub port: the few REST operations agent-runner uses, as plain data
// in and out. Core code (staging/pull-request, the doctor) talks to this
// interface only; octokit.ts is the real one, which the composition root
// wires, and tests point it at a local server that answers like GitHub.
import { EXIT, ExitError } from '../errors.js';

export interface RepoSlug {
  readonly owner: string;
  readonly repo: string;
}

export interface RepoInfo {
  readonly fullName: string;
  readonly defaultBranch: string;
  /** What the token's user may do; undefined when GitHub did not say (no token). */
  readonly permissions: { readonly pull: boolean; readonly push: boolean; readonly admin: boolean } | undefined;
}

export interface BranchInfo {
  readonly name: string;
  readonly sha: string;
  readonly protected: boolean;
  /** Status check contexts the branch's protection requires (empty: none, or protection not visible). */
  readonly requiredChecks: readonly string[];
}

export interface PullRequest {
  readonly number: number;
  readonly url: string;
  readonly state: 'open' | 'closed';
  readonly merged: boolean;
  /** null while GitHub is still computing it. */
  readonly mergeable: boolean | null;
  readonly mergeableState: string | undefined;
  readonly headRef: string;
  readonly headSha: string;
  readonly baseRef: string;
  readonly title: string;
  readonly body: string;
}

/** A check run or a commit status on one commit, in one shape. */
export interface CommitCheck {
  readonly name: string;
  readonly kind: 'check-run' | 'status';
  /** 'pending' until it has a conclusion. */
  readonly state: 'pending' | 'success' | 'neutral' | 'skipped' | 'failure';
  /** GitHub's own word (conclusion or status state), for the operator. */
  readonly conclusion: string;
  readonly url: string | undefined;
}

export type MergeMethod = 'merge' | 'squash' | 'rebase';

export type MergeAnswer =
  | { readonly merged: true; readonly sha: string; readonly message: string }
  /** 405: not mergeable now; 409: the head is not the sha we named. */
  | { readonly merged: false; readonly status: 405 | 409 | 422; readonly message: string };

export interface PullRequestText {
  readonly title: string;
  readonly body: string;
}

export interface GitHubApi {
  getRepo(slug: RepoSlug): Promise<RepoInfo>;
  /** undefined when the branch does not exist. */
  getBranch(slug: RepoSlug, branch: string): Promise<BranchInfo | undefined>;
  /** The open pull request from `head` (a branch of the same repo) into `base`, if any. */
  findOpenPull(slug: RepoSlug, head: string, base: string): Promise<PullRequest | undefined>;
  /** 'exists' when GitHub answers 422 "A pull request already exists". */
  createPull(slug: RepoSlug, head: string, base: string, text: PullRequestText): Promise<PullRequest | 'exists'>;
  updatePull(slug: RepoSlug, number: number, text: PullRequestText): Promise<PullRequest>;
  getPull(slug: RepoSlug, number: number): Promise<PullRequest>;
  /** Every check run and commit status on exactly this commit. */
  checksOn(slug: RepoSlug, sha: string): Promise<CommitCheck[]>;
  mergePull(
    slug: RepoSlug,
    number: number,
    expectedHeadSha: string,
    method: MergeMethod,
    text: PullRequestText,
  ): Promise<MergeAnswer>;
}

export interface GitHubConnection {
  /** API root, e.g. https://api.github.com or https://ghe.example.com/api/v3. */
  readonly baseUrl: string;
  readonly token: string | undefined;
  /** Told when a rate limit makes the client wait (how long, and why): waiting is not failing. */
  onWait(message: string): void;
}

/** What the composition root hands the CLI: opens a client for one API root and token. */
export interface GitHubConnector {
  connect(connection: GitHubConnection): GitHubApi;
}

/**
 * A request GitHub refused (or that never got an answer): GitHub's own
 * message and the request that failed, never the token.
 */
export class GitHubRequestError extends ExitError {
  constructor(
    readonly status: number | undefined,
    readonly request: string,
    readonly githubMessage: string,
    exitCode: typeof EXIT.failed | typeof EXIT.busy = EXIT.failed,
  ) {
    super(`GitHub answered ${status ?? 'nothing'} to ${request}: ${githubMessage}`, exitCode);
    this.name = 'GitHubRequestError';
  }
}
