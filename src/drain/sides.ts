// The runner's end of the hand-off: the agent's and the gate's work driven
// from the drain through `agent-runner side` steps run as those identities
// (launcher), every answer read as data. A task is cut in the agent's own
// repository from a bundle of the commit it starts at; its branch comes back
// as a bundle the runner accepts or refuses (handoff/accept.ts); a candidate
// goes to the gate's own checkout the same way.
import * as path from 'node:path';
import type { FsPort, ProcessPort } from '../ports.js';
import type { Command, TaskId } from '../types.js';
import type { Git, GitIdentity } from '../git/git.js';
import type { Launcher } from '../launch/index.js';
import {
  agentTaskDir,
  agentTasksDir,
  gateCandidateDir,
  sideRepository,
  type IdentityLayout,
  type LaunchedIdentity,
} from '../identities.js';
import { GivenCommits } from '../handoff/give.js';
import { acceptTaskBundle, type Acceptance } from '../handoff/accept.js';
import { taskBranch } from '../staging/names.js';
import { gitsLastWords } from '../git/git.js';
import type { SideTreeState } from '../handoff/side.js';
import type { Mutex } from './mutex.js';

/** node and the install's main.js: how a side step is started. */
export interface SideProgram {
  readonly node: string;
  readonly main: string;
}

export interface SidesDeps {
  readonly git: Git;
  readonly fs: FsPort;
  readonly launcher: Launcher;
  readonly program: SideProgram;
  readonly layout: IdentityLayout;
  /** The runner's checkout. */
  readonly workspace: string;
  /** A folder of the runner's own, for copies of handed-over bundles. */
  readonly scratch: string;
  /** The environment side steps start with (root's launcher sets the identity's own HOME and proxy). */
  readonly env: Readonly<Record<string, string>>;
  /** Who the agent's commits are by. */
  readonly author: GitIdentity | undefined;
  readonly bundleMaxBytes: number;
  readonly runId: string;
  /** Side steps that change a side repository's refs run one at a time (as the runner's own do). */
  readonly refs: Mutex;
}

const MAX_ANSWER = 256 * 1024;
const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** Pure: a program given relative to the command's tree, as the absolute path it names there. */
export function inTree(command: Command): Command {
  const { program, cwd } = command;
  return program.includes('/') && !path.isAbsolute(program)
    ? { ...command, program: path.join(cwd, program) }
    : command;
}

/** A side step that failed: its identity, step and what it said. */
export class SideStepError extends Error {}

function text(value: unknown, max: number): string | null | undefined {
  if (value === null) return null;
  return typeof value === 'string' && value.length <= max ? value : undefined;
}

/** Pure: a side's `state` answer, checked; a string says what is wrong with it. */
export function parseSideState(answer: unknown): SideTreeState | string {
  if (typeof answer !== 'object' || answer === null) return 'the answer is not an object';
  const value = answer as Record<string, unknown>;
  const head = text(value.head, 64);
  const status = text(value.status, 200);
  const unreadable = text(value.unreadable, 4000);
  const notes = text(value.notes, 64 * 1024);
  const blockedNote = text(value.blockedNote, 8 * 1024);
  if (head === undefined || (head !== null && !COMMIT.test(head))) return 'head is not a commit id';
  if (typeof value.dirty !== 'boolean') return 'dirty is not true or false';
  if (status === undefined || unreadable === undefined || notes === undefined || blockedNote === undefined)
    return 'status, unreadable, notes or blockedNote is not a bounded string';
  return { head, dirty: value.dirty, status, unreadable, notes, blockedNote };
}

export class Sides {
  private readonly toAgent: GivenCommits;
  private readonly toGate: GivenCommits;
  /**
   * Finished tasks whose worktrees in the agent's repository wait to be the next task's: moved, switched and cleaned,
   * only the files that differ are written (a fresh worktree writes every file, and removing one deletes them all).
   */
  private readonly spares: TaskId[] = [];

  constructor(private readonly deps: SidesDeps) {
    this.toAgent = new GivenCommits(deps.git, deps.fs, deps.workspace, deps.layout.handoff.toAgent);
    this.toGate = new GivenCommits(deps.git, deps.fs, deps.workspace, deps.layout.handoff.toGate);
  }

  /**
   * The agent's (or gate's) process port: everything they run goes through it. A repo script named relative to its
   * tree (`tools/agent.sh`) is made absolute in the tree it runs in: root's launcher starts absolute programs only.
   */
  processOf(identity: LaunchedIdentity): ProcessPort {
    const port = this.deps.launcher.processFor(identity);
    return {
      ...port,
      run: (command) => port.run(inTree(command)),
      start: (command, handlers) => port.start(inTree(command), handlers),
    };
  }

  /**
   * What an earlier drain left: bundles nobody will read in the folders only the runner writes, and the agent's task
   * worktrees and branches (the agent's side keeps its objects); the number of worktrees it had.
   */
  async clearLeftovers(): Promise<number> {
    for (const dir of [this.deps.layout.handoff.toAgent, this.deps.layout.handoff.toGate])
      for (const name of await this.deps.fs.list(dir)) await this.deps.fs.remove(path.join(dir, name));
    const home = this.deps.layout.agentHome;
    const answer = (await this.step('agent', [
      'clear',
      '--repo',
      sideRepository(home),
      '--dir',
      agentTasksDir(home),
    ])) as { cleared?: unknown };
    return typeof answer?.cleared === 'number' ? answer.cleared : 0;
  }

  /** Runs one side step as `identity`; its one JSON answer. */
  private async step(identity: LaunchedIdentity, args: readonly string[]): Promise<unknown> {
    const home = identity === 'agent' ? this.deps.layout.agentHome : this.deps.layout.gateHome;
    const result = await this.processOf(identity).run({
      program: this.deps.program.node,
      args: [this.deps.program.main, 'side', ...args],
      env: { ...this.deps.env },
      cwd: home,
    });
    if (result.exitCode !== 0)
      throw new SideStepError(
        `the ${identity}'s side ${args[0]} failed (exit ${result.exitCode ?? result.signal}): ${gitsLastWords(result.stderr || result.stdout)}`,
      );
    const line = result.stdout.trim().split('\n').at(-1) ?? '';
    if (line.length > MAX_ANSWER) throw new SideStepError(`the ${identity}'s side ${args[0]} answered too much`);
    try {
      return JSON.parse(line) as unknown;
    } catch {
      throw new SideStepError(`the ${identity}'s side ${args[0]} answered "${line.slice(0, 120)}", not JSON`);
    }
  }

  agentDir(taskId: TaskId): string {
    return agentTaskDir(this.deps.layout.agentHome, taskId);
  }

  /** The task's own earlier worktree when it has one, else any finished task's. */
  private takeSpare(taskId: TaskId): TaskId | undefined {
    const own = this.spares.indexOf(taskId);
    return own >= 0 ? this.spares.splice(own, 1)[0] : this.spares.pop();
  }

  /** Cuts the task's branch at `base` in the agent's repository; the worktree's folder. */
  async prepareTask(taskId: TaskId, base: string): Promise<string> {
    const bundle = await this.toAgent.bundleOf(base);
    const dir = this.agentDir(taskId);
    const author = this.deps.author;
    const spare = this.takeSpare(taskId);
    await this.deps.refs.run(() =>
      this.step('agent', [
        'checkout',
        '--repo',
        sideRepository(this.deps.layout.agentHome),
        '--bundle',
        bundle,
        '--commit',
        base,
        '--dir',
        dir,
        '--branch',
        taskBranch(taskId),
        ...(author ? ['--author-name', author.name, '--author-email', author.email] : []),
        ...(spare ? ['--reuse-dir', this.agentDir(spare), '--reuse-branch', taskBranch(spare)] : []),
      ]),
    );
    return dir;
  }

  /** A task is over: its worktree in the agent's repository waits for the next task (release removes the rest). */
  finishTask(taskId: TaskId): void {
    if (!this.spares.includes(taskId)) this.spares.push(taskId);
  }

  /** How the task's tree stands, as the agent's side reports it. */
  async taskState(taskId: TaskId): Promise<SideTreeState | string> {
    return parseSideState(await this.step('agent', ['state', '--dir', this.agentDir(taskId), '--task', taskId]));
  }

  /** The task's branch handed back and accepted into the runner's repository, or why not. */
  async handOver(taskId: TaskId, base: string): Promise<Acceptance> {
    const branch = taskBranch(taskId);
    const name = `${taskId}-${this.deps.runId}.bundle`;
    const answer = (await this.step('agent', [
      'hand-over',
      '--dir',
      this.agentDir(taskId),
      '--task',
      taskId,
      '--branch',
      branch,
      '--base',
      base,
      '--out',
      this.deps.layout.handoff.fromAgent,
      '--name',
      name,
    ])) as { refused?: unknown };
    if (typeof answer?.refused === 'string')
      return { accepted: false, reason: `nothing to hand over: ${answer.refused.slice(0, 500)}` };
    return this.deps.refs.run(() =>
      acceptTaskBundle(this.deps.git, this.deps.fs, this.deps.workspace, {
        dir: this.deps.layout.handoff.fromAgent,
        name,
        branch,
        base,
        maxBytes: this.deps.bundleMaxBytes,
        ownerUid: this.deps.layout.agentUid,
        scratch: this.deps.scratch,
      }),
    );
  }

  /** Removes the task's worktree (and its branch) in the agent's repository. */
  async removeTask(taskId: TaskId): Promise<void> {
    await this.deps.refs.run(() =>
      this.step('agent', [
        'remove',
        '--repo',
        sideRepository(this.deps.layout.agentHome),
        '--dir',
        this.agentDir(taskId),
        '--branch',
        taskBranch(taskId),
      ]),
    );
  }

  /** Checks `commit` out in the gate's own repository; the folder. */
  async prepareCandidate(commit: string): Promise<string> {
    const bundle = await this.toGate.bundleOf(commit);
    const dir = gateCandidateDir(this.deps.layout.gateHome, this.deps.runId);
    await this.step('gate', [
      'checkout',
      '--repo',
      sideRepository(this.deps.layout.gateHome),
      '--bundle',
      bundle,
      '--commit',
      commit,
      '--dir',
      dir,
    ]);
    return dir;
  }

  async removeCandidate(): Promise<void> {
    const dir = gateCandidateDir(this.deps.layout.gateHome, this.deps.runId);
    await this.step('gate', ['remove', '--repo', sideRepository(this.deps.layout.gateHome), '--dir', dir]);
  }

  /** The end of a drain: spare worktrees and the bundles it gave are gone (the sides keep the objects). */
  async release(): Promise<void> {
    for (let spare = this.spares.pop(); spare; spare = this.spares.pop())
      await this.removeTask(spare).catch(() => undefined);
    await this.toAgent.removeAll();
    await this.toGate.removeAll();
  }
}
