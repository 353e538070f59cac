// agent-runner results serve --repo NAME: the runner's results endpoint, the
// git smart-HTTP server task pods push their results to
// (backends/kubernetes/results/). Run as the repo's runner, never root: it
// runs git in the runner's own results repository. One event per line on
// stderr (the journal). Runs until SIGTERM.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT, UsageError } from '../errors.js';
import { stateDir } from '../paths.js';
import { Git } from '../git/git.js';
import { agentBaseEnv } from '../agent/env.js';
import { USER_PATH } from '../system-path.js';
import { readEndpoint } from '../control/registry/kubernetes.js';
import { DEFAULT_RESULT_MAX_BYTES, resultsPath, serveResults } from '../../backends/kubernetes/results/index.js';
import { parsePositiveInt } from './options.js';

interface ServeOptions {
  repo: string;
  listen: string;
  maxBytes?: string;
}

export const DEFAULT_RESULTS_LISTEN = '127.0.0.1:9419';
const REPO_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .command('serve')
    .description("as the repo's runner: take task pods' result pushes over HTTP until SIGTERM")
    .requiredOption('--repo <name>', 'the registry name of the repo')
    .option('--listen <ip:port>', 'the address the pods reach (git_push_url)', DEFAULT_RESULTS_LISTEN)
    .option('--max-bytes <n>', `the most bytes one push may send (default ${DEFAULT_RESULT_MAX_BYTES})`)
    .addHelpText(
      'after',
      '\nExamples:\n  sudo -u web agent-runner results serve --repo web --listen 10.0.0.5:9419\n  (git_push_url = "http://10.0.0.5:9419/web.git")\n',
    )
    .action(async (options: ServeOptions) => {
      setExit(await serve(context, options));
    });
}

async function serve(context: CliContext, options: ServeOptions): Promise<number> {
  if (context.uid === 0)
    throw new UsageError(
      `results serve runs git in the results repository: run it as the repo's runner (sudo -u RUNNER agent-runner results serve --repo ${options.repo}), never as root`,
    );
  if (!REPO_NAME.test(options.repo)) throw new UsageError(`--repo: ${JSON.stringify(options.repo)} is not a repo name`);
  const endpoint = readEndpoint(options.listen);
  if (typeof endpoint === 'string')
    throw new UsageError(
      `--listen: ${JSON.stringify(options.listen)} ${endpoint}; write IP:PORT, e.g. ${DEFAULT_RESULTS_LISTEN}`,
    );
  const maxBodyBytes =
    options.maxBytes === undefined
      ? DEFAULT_RESULT_MAX_BYTES
      : parsePositiveInt('--max-bytes', options.maxBytes, 2 ** 40);
  if (!context.listenResults) throw new UsageError('no results listener is wired into this agent-runner');
  const { clock, process, fs } = context.ports;
  const log = (event: string, fields: Record<string, unknown> = {}) =>
    context.err(`${JSON.stringify({ time: new Date(clock.now()).toISOString(), event, ...fields })}\n`);
  const env = agentBaseEnv(context.env);
  const state = stateDir(context.env);
  const listener = await serveResults({
    git: new Git(process, { env }),
    fs,
    listen: context.listenResults,
    state,
    repo: options.repo,
    host: endpoint.ip,
    port: endpoint.port,
    maxBodyBytes,
    path: env.PATH ?? USER_PATH,
    log,
  }).catch((error: unknown) => {
    throw new UsageError(
      `--listen ${options.listen}: cannot serve results (${error instanceof Error ? error.message : String(error)}); stop what holds the port (ss -ltnp) or pick another`,
    );
  });
  log('results-listening', { host: listener.host, port: listener.port, path: resultsPath(options.repo), state });
  if (!context.terminate.aborted)
    await new Promise<void>((resolve) => context.terminate.addEventListener('abort', () => resolve(), { once: true }));
  await listener.close();
  log('results-stopped');
  return EXIT.ok;
}
