// The drain's Kubernetes path for one run, built as the runner from what
// dispatch passed (control/dispatch/kubernetes-arg.ts): the cluster reached through
// the runner's kubeconfig, the push tokens and the results repository in the
// runner's own state dir (where `results serve` takes the pods' pushes), the
// pod worker told the repo's agent settings.
import * as path from 'node:path';
import type { Clock, FsPort } from '../../../src/ports.js';
import type { Git, GitIdentity } from '../../../src/git/git.js';
import type { AgentAdapter, RepoConfig, RepoKubernetes } from '../../../src/types.js';
import type { KubernetesRun } from '../../../src/control/dispatch/kubernetes-arg.js';
import type { RemoteAttempts } from '../../../src/drain/remote.js';
import { STAGING_BRANCH } from '../../../src/staging/names.js';
import type { KubeConnector, KubeTarget } from '../port.js';
import { kubeconfigFile } from '../kubeconfig.js';
import { podWorkerEnv } from '../worker/index.js';
import { issuePushToken, pushTokensDir, resultsRepository, revokePushToken, takeResult } from '../results/index.js';
import { kubeAttempts } from './attempts.js';

/** Where the runner reaches the repo's cluster: the registry's kubeconfig (else its own), or in-cluster. */
export function kubeTargetOf(settings: RepoKubernetes, runnerHome: string): KubeTarget {
  const { cluster, namespace } = settings;
  if (cluster.kind === 'in-cluster') return { source: 'in-cluster', namespace };
  return { source: 'kubeconfig', file: kubeconfigFile(cluster, runnerHome)!, context: cluster.context, namespace };
}

export interface RunnerKubeInput {
  readonly run: KubernetesRun;
  readonly connector: KubeConnector;
  readonly fs: FsPort;
  readonly clock: Clock;
  /** Git as the runner (takes the results into its repository). */
  readonly git: Git;
  readonly runId: string;
  readonly workspace: string;
  /** The runner's state dir: the results repository and the push tokens are there. */
  readonly state: string;
  readonly runnerHome: string;
  readonly config: RepoConfig;
  readonly adapter: AgentAdapter;
  /** The agent's binary as found on this host: the pod runs the one of that name on the image's PATH. */
  readonly binary: string;
  readonly passEnv: readonly string[];
  /** Who the agent's commits are by (the registry's author, or the checkout's configured identity). */
  readonly author: GitIdentity | undefined;
  readonly bundleMaxBytes: number;
  readonly stop: AbortSignal;
}

/** The drain's Kubernetes path for one run, as the runner. */
export function runnerKubeAttempts(input: RunnerKubeInput): RemoteAttempts {
  const { run, fs, config } = input;
  const tokens = pushTokensDir(input.state, run.repo);
  const binary = input.adapter.name === 'command' ? input.binary : path.basename(input.binary);
  return kubeAttempts({
    jobs: input.connector.connect(kubeTargetOf(run.settings, input.runnerHome)),
    clock: input.clock,
    repo: run.repo,
    runId: input.runId,
    kubernetes: run.settings,
    limits: run.limits,
    deadlineSec: config.agentWallClockSec,
    baseBranch: STAGING_BRANCH,
    workerEnv: (_ref, work) =>
      podWorkerEnv(config, binary, {
        passEnv: input.passEnv,
        secretEnv: run.settings.agentSecret?.keys ?? [],
        ...(work.retryReason === undefined ? {} : { retryReason: work.retryReason }),
        ...(input.author === undefined ? {} : { author: input.author }),
      }),
    issueToken: (ref) => issuePushToken(fs, tokens, ref),
    revokeToken: (ref) => revokePushToken(fs, tokens, ref),
    takeResult: (ref) =>
      takeResult(
        {
          git: input.git,
          fs,
          workspace: input.workspace,
          results: resultsRepository(input.state, run.repo),
          scratch: path.join(input.state, 'results', `${run.repo}.scratch`),
          maxBytes: input.bundleMaxBytes,
        },
        ref,
      ),
    stop: input.stop,
  });
}
