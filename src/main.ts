// The composition root: the one place that reads process.argv and
// process.env and wires the real ports (every one, the control plane's too).
import { fileURLToPath } from 'node:url';
import * as path from 'node:path';
import { runCli } from './cli/commands.js';
import { realControlPorts } from './io/wire.js';
import { SIGNAL_EXIT } from './errors.js';
import { lazyConnector } from './github/lazy.js';
import { openChannelOnFd } from './io/line-channel.js';
import { askOnTerminal, closableWriter } from './io/stdio/index.js';
import { lazyKubeConnector } from '../backends/kubernetes/client/lazy.js';

const selfBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/agent-runner');

// SIGTERM/SIGINT abort the signal; long commands (orchestrate, watch) stop at
// the next boundary instead of dying mid-merge.
const terminate = new AbortController();
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (terminate.signal.aborted) process.exit(SIGNAL_EXIT[signal]);
    terminate.abort();
  });
}

// A reader that went away (`| head -1`) ends the output, not the process with a stack trace: what is still to print
// is dropped, and a long command (logs -f, orchestrate) stops at its next boundary as on SIGTERM. The exit code
// stays the command's own (docs/operations.md, "Exit codes").
const readerGone = (code: string | undefined) => {
  if (code !== 'EPIPE') process.stderr.write(`agent-runner: cannot write to stdout (${code ?? 'error'}); stopping\n`);
  terminate.abort();
};
const out = closableWriter(process.stdout, readerGone);
const err = closableWriter(process.stderr, () => terminate.abort());

const exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  ports: realControlPorts(),
  stdoutIsTTY: Boolean(process.stdout.isTTY),
  ask: process.stdin.isTTY ? askOnTerminal : undefined,
  out,
  err,
  uid: process.getuid?.() ?? -1,
  terminate: terminate.signal,
  selfBin,
  // A repo user reaches GitHub only through its proxy (the egress lock).
  github: lazyConnector(async () => {
    const [{ octokitConnector }, { proxyFetch }] = await Promise.all([
      import('./github/octokit.js'),
      import('./io/proxy-fetch.js'),
    ]);
    return octokitConnector({
      fetch: proxyFetch(
        process.env.https_proxy ?? process.env.HTTPS_PROXY,
        process.env.no_proxy ?? process.env.NO_PROXY,
      ),
    });
  }),
  demoGitHub: async (options) => (await import('./io/demo-github.js')).startDemoGitHub(options),
  demoProvider: async () => (await import('./io/broker/fake-provider.js')).startFakeProvider(),
  openLauncherChannel: openChannelOnFd,
  serveBroker: async (options) => (await import('./io/broker/serve.js')).serveBroker(options),
  listenWebhook: async (handler, options) => (await import('./io/webhook/server.js')).listenWebhook(handler, options),
  brokerKeys: { read: async (file) => (await import('./io/broker/key-file.js')).readKeyFile(file) },
  listenResults: async (handler, options) => (await import('./io/results/server.js')).listenResults(handler, options),
  kubernetes: lazyKubeConnector(async () => (await import('../backends/kubernetes/client/real-jobs.js')).kubeConnector),
});
process.exitCode = exitCode;
// Signal listeners must not keep a finished command alive.
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.removeAllListeners(signal);
