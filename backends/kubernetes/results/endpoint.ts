// The results endpoint: git's smart HTTP over `git http-backend` (real git,
// as CGI) for one repo's results repository, pushes only. What each request
// may do is decided here; the socket, the CGI process and the body's bytes
// are the edge's (src/io/results/, behind ResultsListen). A push needs a
// bearer token issued for one attempt (tokens.ts) and may only create that
// attempt's result ref: checked on the ref updates before git sees them
// (protocol.ts), then again by git, which is told the one ref (the
// pre-receive hook, hook.ts) and shown no other (receive.hideRefs), and by
// the repository's own config (no delete, no rewrite, objects fsck'd, input
// capped).
import * as path from 'node:path';
import type { FsPort } from '../../../src/ports.js';
import type { Command } from '../../../src/types.js';
import type { Git } from '../../../src/git/git.js';
import { resultRef } from '../manifests/spec.js';
import { classifyRequest, pushProblem, type PushCommand } from './protocol.js';
import { attemptOfToken, type ResultAttempt } from './tokens.js';
import { DEFAULT_RESULT_MAX_BYTES, ensureResultsRepository, pushTokensDir } from './repository.js';

/** A request as the edge hands it over, before any of its body is read. */
export interface ResultsRequestHead {
  readonly method: string;
  /** The path and query as sent. */
  readonly url: string;
  readonly authorization: string | undefined;
  readonly contentLength: number | undefined;
  readonly contentEncoding: string | undefined;
  readonly remoteAddress: string;
}

export type ResultsAdmission =
  | { readonly kind: 'refuse'; readonly status: number; readonly message: string }
  | { readonly kind: 'advertise'; readonly backend: Command; readonly attempt: ResultAttempt }
  | {
      readonly kind: 'receive';
      readonly backend: Command;
      readonly attempt: ResultAttempt;
      readonly resultRef: string;
    };

/** What the edge asks of the endpoint. */
export interface ResultsHandler {
  /** The most bytes of one request body; more is a 413 and the backend is stopped. */
  readonly maxBodyBytes: number;
  admit(head: ResultsRequestHead): Promise<ResultsAdmission>;
  /** Why the ref updates of an admitted push are refused, or undefined to hand the push to git. */
  refusePush(commands: readonly PushCommand[], resultRef: string): string | undefined;
  log(event: string, fields?: Record<string, unknown>): void;
}

export interface ResultsListener {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

/** The edge: listens on host:port and answers each request as the handler says (src/io/results/). */
export type ResultsListen = (
  handler: ResultsHandler,
  options: { readonly host: string; readonly port: number },
) => Promise<ResultsListener>;

export interface ResultsOptions {
  readonly git: Git;
  readonly fs: FsPort;
  readonly listen: ResultsListen;
  /** The runner's state dir (its AGENT_RUNNER_STATE): where the results repository and the token hashes live. */
  readonly state: string;
  readonly repo: string;
  /** The address to listen on: 127.0.0.1 unless the pods reach the runner at another of its addresses. */
  readonly host?: string;
  /** 0 picks a free port (tests). */
  readonly port: number;
  readonly maxBodyBytes?: number;
  /** PATH for git http-backend. */
  readonly path: string;
  readonly log: (event: string, fields?: Record<string, unknown>) => void;
}

const refuse = (status: number, message: string): ResultsAdmission => ({ kind: 'refuse', status, message });

/** Pure: the CGI command of one admitted request. */
export function backendCommand(
  repository: string,
  request: { readonly method: string; readonly pathInfo: string; readonly query: string },
  attempt: ResultAttempt,
  envPath: string,
): Command {
  const ref = resultRef(attempt.task, attempt.attempt);
  return {
    program: 'git',
    args: ['http-backend'],
    env: {
      PATH: envPath,
      HOME: '/nonexistent',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_PROJECT_ROOT: path.dirname(repository),
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: `/${path.basename(repository)}${request.pathInfo}`,
      REQUEST_METHOD: request.method,
      QUERY_STRING: request.query,
      REMOTE_USER: `${attempt.task}.${attempt.attempt}`,
      AGENT_RUNNER_RESULT_REF: ref,
      // Every ref but the attempt's own is hidden: not advertised, and refused by receive-pack if named.
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'receive.hideRefs',
      GIT_CONFIG_VALUE_0: 'refs/',
      GIT_CONFIG_KEY_1: 'receive.hideRefs',
      GIT_CONFIG_VALUE_1: `!${ref}`,
    },
    cwd: repository,
  };
}

/** The handler of one repo's results repository. */
export function resultsHandler(options: {
  readonly fs: FsPort;
  readonly repository: string;
  readonly tokens: string;
  readonly base: string;
  readonly maxBodyBytes: number;
  readonly path: string;
  readonly log: ResultsHandler['log'];
}): ResultsHandler {
  return {
    maxBodyBytes: options.maxBodyBytes,
    log: options.log,
    refusePush: pushProblem,
    async admit(head) {
      const request = classifyRequest(head.method, head.url, options.base);
      if (request.kind === 'refused') return refuse(request.status, request.message);
      const bearer = /^Bearer ([!-~]{1,200})$/.exec(head.authorization ?? '');
      if (!bearer)
        return refuse(401, 'a push needs its attempt\'s token as "Authorization: Bearer TOKEN" (http.extraHeader)');
      const attempt = await attemptOfToken(options.fs, options.tokens, bearer[1]!);
      if (!attempt)
        return refuse(401, 'the push token was refused: it is not one this runner issued, or it was revoked');
      if (head.contentLength !== undefined && head.contentLength > options.maxBodyBytes)
        return refuse(
          413,
          `the push is ${head.contentLength} bytes; the results endpoint takes at most ${options.maxBodyBytes}`,
        );
      const query = head.url.includes('?') ? head.url.slice(head.url.indexOf('?') + 1) : '';
      if (request.kind === 'advertise')
        return {
          kind: 'advertise',
          attempt,
          backend: backendCommand(
            options.repository,
            { method: 'GET', pathInfo: '/info/refs', query },
            attempt,
            options.path,
          ),
        };
      if (head.contentEncoding !== undefined && head.contentEncoding !== 'identity')
        return refuse(415, `a push body is sent plain, not ${head.contentEncoding}`);
      return {
        kind: 'receive',
        attempt,
        resultRef: resultRef(attempt.task, attempt.attempt),
        backend: backendCommand(
          options.repository,
          { method: 'POST', pathInfo: '/git-receive-pack', query },
          attempt,
          options.path,
        ),
      };
    },
  };
}

/** The path the endpoint serves a repo's results at: /REPO.git (git_push_url's path). */
export function resultsPath(repo: string): string {
  return `/${repo}.git`;
}

/**
 * Makes (or repairs) the repo's results repository and serves it until the listener is closed. The tokens it takes
 * are the files issuePushToken writes under the same state dir, read at each request: nothing to tell it of a new one.
 */
export async function serveResults(options: ResultsOptions): Promise<ResultsListener> {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_RESULT_MAX_BYTES;
  const repository = await ensureResultsRepository(options.git, options.fs, options.state, options.repo, maxBodyBytes);
  const handler = resultsHandler({
    fs: options.fs,
    repository,
    tokens: pushTokensDir(options.state, options.repo),
    base: resultsPath(options.repo),
    maxBodyBytes,
    path: options.path,
    log: options.log,
  });
  return options.listen(handler, { host: options.host ?? '127.0.0.1', port: options.port });
}
