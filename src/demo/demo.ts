// The embedded demo: a bare origin and a clone in a temp dir, a board that
// walks every path, the bundled scripted agent, one drain, then status and
// promote. No root, no credentials, no network: the agents' model calls go
// through the run's broker to a local fake of the providers' APIs.
import * as path from 'node:path';
import type { Ports } from '../ports.js';
import type { DrainEvent, DrainSummary } from '../drain/types.js';
import { Git } from '../git/git.js';
import { cloneRepo, commitEverything, initBare, pushBranch } from '../git/new-repo.js';
import { orchestrate, type OrchestrateInput } from '../drain/orchestrate.js';
import { applyOverrides, CONFIG_FILE } from '../repo/config.js';
import { readRepoConfig } from '../repo/read-config.js';
import { adapterFor } from '../agent/adapters/index.js';
import { renderTaskFile, taskFileName } from '../board/render.js';
import { CONFIG_FILE as BOARD_CONFIG_FILE, TASKS_DIR } from '../board/read.js';
import { promote, stagingStatus, type PromoteResult, type StagingStatus } from '../staging/lifecycle.js';
import {
  DEMO_BACKLOG_CONFIG,
  DEMO_GATES,
  DEMO_README,
  DEMO_SPEND_LIMITS,
  DEMO_TASKS,
  demoConfig,
} from './demo-repo.js';
import { appendBrokerUsage, appendLedger, readLedger, sealRun, type LedgerRecord } from '../control/ledger/ledger.js';
import { utcDay } from '../spend/verdict.js';
import type { SpendPolicy } from '../spend/policy.js';
import type { Install } from '../control/repo-user/index.js';
import type { RateLimitRecord, UsageRecord } from '../broker/types.js';
import { startDemoModelBroker, type ProviderTotals, type StartDemoProvider } from './model-broker.js';
import { demoLauncher } from './launcher.js';

/** The demo's repo name in its ledger. */
export const DEMO_REPO = 'demo';

export interface DemoInput {
  /** argv of the bundled scripted agent. */
  readonly agentCommand: readonly string[];
  /** PATH for git and the agent. */
  readonly path: string;
  readonly onEvent: (event: DrainEvent) => void;
  readonly onStep: (text: string) => void;
  readonly stop: AbortSignal;
  readonly control: OrchestrateInput['control'];
  readonly locks: OrchestrateInput['locks'];
  /** false: leave the base alone (demo --github promotes through a pull request instead). */
  readonly promoteByPush?: boolean;
  /** The local fake of the providers' model APIs the agents' broker sends their calls to. */
  readonly startProvider: StartDemoProvider;
  /** node and dist/src/main.js, to start the broker process from. */
  readonly install: Install;
}

export interface DemoResult {
  readonly root: string;
  readonly clone: string;
  readonly summary: DrainSummary;
  readonly expected: Readonly<Record<string, string>>;
  readonly status: StagingStatus;
  readonly promotion: PromoteResult | undefined;
  readonly home: string;
  readonly state: string;
  readonly git: Git;
  /** The drain's sessions as root would seal them. */
  readonly ledger: readonly LedgerRecord[];
  /** Every model response the broker metered during the drain. */
  readonly metered: readonly UsageRecord[];
  /** Every provider 429 the broker saw during the drain. */
  readonly rateLimits: readonly RateLimitRecord[];
  /** What the fake provider's answers reported, summed: what the metered records add up to. */
  readonly providerTotals: ProviderTotals;
  /** Where the broker listened (it has ended). */
  readonly brokerUrl: string;
}

function stamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
}

export async function runDemo(ports: Ports, input: DemoInput): Promise<DemoResult> {
  const { fs, clock } = ports;
  const root = await fs.makeTempDir('agent-runner-demo-');
  const origin = path.join(root, 'origin.git');
  const clone = path.join(root, 'project');
  const home = path.join(root, 'home');
  const state = path.join(root, 'state');
  await fs.mkdirp(home, 0o700);
  // claude and codex on the agent's PATH are the scripted agent: claude works, codex reviews.
  const bin = path.join(root, 'bin');
  await fs.mkdirp(bin, 0o755);
  const wrapper = `#!/bin/sh\nexec ${input.agentCommand.map((arg) => `'${arg.replace(/'/g, "'\\''")}'`).join(' ')} "$@"\n`;
  for (const cli of ['claude', 'codex']) await fs.writeAtomic(path.join(bin, cli), wrapper, 0o755);
  // Git and the agent see only this: no user or system git config, a fixed identity.
  const env = {
    HOME: home,
    PATH: `${bin}:${input.path}`,
    LANG: 'C.UTF-8',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'demo agent',
    GIT_AUTHOR_EMAIL: 'agent@demo.invalid',
    GIT_COMMITTER_NAME: 'demo agent',
    GIT_COMMITTER_EMAIL: 'agent@demo.invalid',
  };
  const git = new Git(ports.process, {
    env,
    identity: { name: 'demo operator', email: 'operator@demo.invalid' },
    startedBy: await input.control.self(),
  });

  input.onStep(`demo repo: ${clone} (origin ${origin})`);
  await initBare(git, root, origin, 'main');
  await cloneRepo(git, root, origin, clone);
  const created = stamp(clock.now());
  const files: Record<string, string> = {
    'README.md': DEMO_README,
    VERSION: '1.0.0\n',
    [BOARD_CONFIG_FILE]: DEMO_BACKLOG_CONFIG,
    [CONFIG_FILE]: demoConfig(),
    '.agent/gates.sh': DEMO_GATES,
  };
  for (const task of DEMO_TASKS) {
    const { expect: _expect, ...fields } = task;
    files[path.join(TASKS_DIR, taskFileName(task.id, task.title))] = renderTaskFile({
      ...fields,
      createdDate: created,
    });
  }
  for (const [name, text] of Object.entries(files)) {
    await fs.mkdirp(path.dirname(path.join(clone, name)));
    await fs.writeAtomic(path.join(clone, name), text, name.endsWith('.sh') ? 0o755 : 0o644);
  }
  await commitEverything(git, clone, 'main', 'Demo project with a board of nine tasks');
  await pushBranch(git, clone, 'origin', 'main');

  const { config: repoConfig } = await readRepoConfig(fs, clone);
  const config = applyOverrides(repoConfig, {});
  input.onStep(`draining ${DEMO_TASKS.length} tasks with the scripted agent, ${config.maxParallel} at a time`);
  input.onStep(
    'one user plays the runner, the agent and the gate here (no root); commits still cross between them as bundles',
  );
  const runId = ports.ids.next();
  const runStarted = new Date(clock.now()).toISOString();
  const spend: SpendPolicy = {
    limits: DEMO_SPEND_LIMITS,
    day: utcDay(clock.now()),
    spentToday: { usd: 0, tokens: 0 },
    taskSpentUsd: {},
  };
  const { uid } = await input.control.self();
  const model = await startDemoModelBroker(ports, {
    startProvider: input.startProvider,
    install: input.install,
    dir: root,
    runId,
    uid,
    spend,
    log: (line) => input.onStep(`broker: ${line}`),
  });
  const summary = await drainThroughBroker(model, () => {
    input.onStep(
      `the agents reach their model through the broker at ${model.broker.url}; the provider key never leaves the broker`,
    );
    return orchestrate(ports, git, {
      workspace: clone,
      config,
      only: undefined,
      push: true,
      force: false,
      runId,
      env,
      secrets: [],
      stateDir: state,
      adapter: adapterFor(config.assistant),
      binary: path.join(bin, 'claude'),
      spend,
      onEvent: input.onEvent,
      stop: input.stop,
      graceMs: 5000,
      control: input.control,
      locks: input.locks,
      launcher: demoLauncher(ports.process, model.broker, model.grantUid),
      brokerUrl: model.broker.url,
    });
  });
  // What dispatch does as root: each metered response into the ledger (it does so as they come), then the sessions.
  // The demo keeps root's side in the drain's own state dir, as a user's own control plane does (AGENT_RUNNER_STATE):
  // so `runs`, `fleet` and the dashboard read one place and agree.
  const sealedAt = new Date(clock.now()).toISOString();
  for (const record of model.metered) {
    const sealed = await appendBrokerUsage(fs, state, DEMO_REPO, record, sealedAt);
    if (!sealed.ok) input.onStep(`broker: ${sealed.reason}`);
  }
  await appendLedger(
    fs,
    state,
    DEMO_REPO,
    sealRun({ repo: DEMO_REPO, runId, startedAt: runStarted, endedAt: sealedAt, summary, sealedAt }),
  );
  const ledger = await readLedger(fs, state, DEMO_REPO);
  const lifecycle = { ports, git, workspace: clone, baseBranch: 'main', stateDir: state, fetch: true };
  const status = await stagingStatus(lifecycle);
  const promotion = input.promoteByPush === false ? undefined : await promote(lifecycle);
  const expected = Object.fromEntries(DEMO_TASKS.map((task) => [task.id, task.expect]));
  return {
    root,
    clone,
    summary,
    expected,
    status,
    promotion,
    home,
    state,
    git,
    ledger,
    metered: model.metered,
    rateLimits: model.rateLimits,
    providerTotals: { ...model.provider.totals },
    brokerUrl: model.broker.url,
  };
}

/** The drain, then the broker and the provider stopped whatever the drain did (its last records are in by then). */
async function drainThroughBroker<T>(model: { stop(): Promise<void> }, drain: () => Promise<T>): Promise<T> {
  try {
    return await drain();
  } finally {
    await model.stop();
  }
}
