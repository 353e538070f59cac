// The runner's end of the hand-off: the agent's and the gate's work driven
// from the drain, each step a plain git (or rm, head, ls) run as that
// identity (launcher) in its own repository, every answer read as data. A
// task is cut in the agent's repository from a bundle of the commit it
// starts at; its branch comes back as a bundle the runner accepts or refuses
// (handoff/accept.ts); a candidate goes to the gate's own checkout the same
// way.
import * as path from 'node:path';
import type { FsPort, ProcessPort } from '../ports.js';
import type { Command, Task, TaskId } from '../types.js';
import { Git, type GitIdentity } from '../git/git.js';
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
import {
  SideStepError,
  checkoutChangedBy,
  checkoutGiven,
  dropTree,
  freshVerdictFile,
  restoreCheckout,
  freshRepository,
  handOverTask,
  taskFileText,
  type SideTools,
} from '../handoff/side.js';
import { taskBranch } from '../staging/names.js';
import { MAX_TASK_FILE_BYTES, isUnreadable, parseTaskFile } from '../board/parse.js';
import type { TreeState } from '../agent/run-task.js';
import type { Mutex } from './mutex.js';

export interface SidesDeps {
  readonly git: Git;
  readonly fs: FsPort;
  readonly launcher: Launcher;
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
  /** Steps that change a side repository's refs run one at a time (as the runner's own do). */
  readonly refs: Mutex;
}

/** Pure: a program given relative to the command's tree, as the absolute path it names there. */
export function inTree(command: Command): Command {
  const { program, cwd } = command;
  return program.includes('/') && !path.isAbsolute(program)
    ? { ...command, program: path.join(cwd, program) }
    : command;
}

/** Pure: how a task's tree stands, from the side's git status and the text of the task's file there. */
export function treeStateFrom(
  task: Task,
  status: { head: string | undefined; dirty: boolean },
  file: { readonly file: string; readonly text: string } | undefined,
): TreeState {
  const gone = { ...status, status: undefined, task: undefined };
  if (!file) return { ...gone, unreadable: `task ${task.id} is no longer on the board` };
  const parsed = parseTaskFile(file.file, file.text);
  if (isUnreadable(parsed)) return { ...gone, unreadable: `${parsed.file}: ${parsed.reason}` };
  if (parsed.id.toLowerCase() !== task.id.toLowerCase())
    return { ...gone, unreadable: `${file.file} is now task ${parsed.id}, not ${task.id}` };
  return { ...status, status: parsed.status, task: parsed, unreadable: undefined };
}

/** Runs a step on a side: whatever fails there is that side's (a SideStepError), never the runner's own error. */
async function onSide<T>(who: LaunchedIdentity, what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof SideStepError) throw error;
    throw new SideStepError(`the ${who}'s ${what} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export class Sides {
  private readonly toAgent: GivenCommits;
  private readonly toGate: GivenCommits;
  private readonly agent: SideTools;
  private readonly gate: SideTools;
  private readonly ready = new Map<LaunchedIdentity, Promise<void>>();
  /**
   * Finished tasks whose worktrees in the agent's repository wait to be the next task's: moved, switched and cleaned,
   * only the files that differ are written (a fresh worktree writes every file, and removing one deletes them all).
   */
  private readonly spares: TaskId[] = [];

  constructor(private readonly deps: SidesDeps) {
    this.toAgent = new GivenCommits(deps.git, deps.fs, deps.workspace, deps.layout.handoff.toAgent);
    this.toGate = new GivenCommits(deps.git, deps.fs, deps.workspace, deps.layout.handoff.toGate);
    const tools = (identity: LaunchedIdentity): SideTools => {
      const process = this.processOf(identity);
      const git = new Git(process, { env: deps.env });
      return { git: deps.author ? git.withIdentity(deps.author) : git, process, env: deps.env, who: identity };
    };
    this.agent = tools('agent');
    this.gate = tools('gate');
  }

  /**
   * The agent's (or gate's) process port: everything they run goes through it. A repo script named relative to its
   * tree (`tools/agent.sh`) is made absolute in the tree it runs in: root's launcher takes absolute programs and bare
   * names only.
   */
  processOf(identity: LaunchedIdentity): ProcessPort {
    const port = this.deps.launcher.processFor(identity);
    return {
      ...port,
      run: (command) => port.run(inTree(command)),
      start: (command, handlers) => port.start(inTree(command), handlers),
    };
  }

  private repositoryOf(identity: LaunchedIdentity): string {
    return sideRepository(identity === 'agent' ? this.deps.layout.agentHome : this.deps.layout.gateHome);
  }

  /** The identity's repository, made anew once a drain (its worktrees and what it held before gone with it). */
  private ensure(identity: LaunchedIdentity): Promise<void> {
    let made = this.ready.get(identity);
    if (!made) {
      const { agentHome, gateHome } = this.deps.layout;
      made = freshRepository(
        identity === 'agent' ? this.agent : this.gate,
        this.repositoryOf(identity),
        identity === 'agent' ? [agentTasksDir(agentHome)] : [gateCandidateDir(gateHome, 'current')],
        identity === 'agent' ? this.deps.author : undefined,
      );
      made.catch(() => this.ready.delete(identity));
      this.ready.set(identity, made);
    }
    return made;
  }

  agentDir(taskId: TaskId): string {
    return agentTaskDir(this.deps.layout.agentHome, taskId);
  }

  /**
   * What an earlier drain left: bundles nobody will read in the folders only the runner writes; and the agent's
   * repository with its task worktrees, made anew (the gate's is, at its first candidate).
   */
  async clearLeftovers(): Promise<void> {
    for (const dir of [this.deps.layout.handoff.toAgent, this.deps.layout.handoff.toGate])
      for (const name of await this.deps.fs.list(dir)) await this.deps.fs.remove(path.join(dir, name));
    await this.ensure('agent');
  }

  /** The task's own earlier worktree when it has one, else any finished task's. */
  private takeSpare(taskId: TaskId): TaskId | undefined {
    const own = this.spares.indexOf(taskId);
    return own >= 0 ? this.spares.splice(own, 1)[0] : this.spares.pop();
  }

  /**
   * Hands `commit` to a side and checks it out there: no bundle when the side holds it, a thin one when it holds
   * something before it, the whole one when a thin one did not do (the side lost what it leant on).
   */
  private async give(
    given: GivenCommits,
    commit: string,
    checkout: (bundle: string | undefined) => Promise<void>,
  ): Promise<void> {
    if (given.holds(commit)) return checkout(undefined);
    try {
      await checkout(await given.bundleOf(commit));
    } catch (error) {
      if (!(error instanceof SideStepError)) throw error;
      await checkout(await given.bundleOf(commit, true));
    }
    given.receivedBy(commit);
  }

  /** Cuts the task's branch at `base` in the agent's repository; the worktree's folder. */
  async prepareTask(taskId: TaskId, base: string): Promise<string> {
    await this.ensure('agent');
    const dir = this.agentDir(taskId);
    const spare = this.takeSpare(taskId);
    const reuse = spare && spare !== taskId ? { reuse: { dir: this.agentDir(spare), branch: taskBranch(spare) } } : {};
    await this.deps.refs.run(() =>
      this.give(this.toAgent, base, (bundle) =>
        onSide('agent', 'checkout', () =>
          checkoutGiven(this.agent, {
            repo: this.repositoryOf('agent'),
            bundle,
            commit: base,
            dir,
            branch: taskBranch(taskId),
            ...reuse,
          }),
        ),
      ),
    );
    return dir;
  }

  /** How the task's tree stands, as the agent's side shows it. */
  async taskState(task: Task): Promise<TreeState> {
    const dir = this.agentDir(task.id);
    return onSide('agent', 'look at its tree', async () =>
      treeStateFrom(
        task,
        await this.agent.git.treeState(dir),
        await taskFileText(this.agent, dir, task.file, task.id, MAX_TASK_FILE_BYTES),
      ),
    );
  }

  /**
   * The task's branch handed back and accepted into the runner's repository, or why not; with leftovers, what the
   * agent left uncommitted is committed first (a task it said Done or Blocked: nothing of it is lost).
   */
  async handOver(taskId: TaskId, base: string, withLeftovers: boolean): Promise<Acceptance> {
    const branch = taskBranch(taskId);
    const name = `${taskId}.bundle`;
    const refused = await onSide('agent', 'hand-over', () =>
      handOverTask(this.agent, {
        dir: this.agentDir(taskId),
        taskId,
        branch,
        base,
        out: path.join(this.deps.layout.handoff.fromAgent, name),
        withLeftovers,
      }),
    );
    if (refused) return { accepted: false, reason: `nothing to hand over: ${refused}` };
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

  /**
   * The files of a review round: the verdict's schema, written by the runner where the agent reads (codex's
   * --output-schema), and the verdict file, made empty by the agent in the folder it hands things back through.
   */
  async reviewFiles(
    taskId: TaskId,
    round: number,
    attempt: number,
    schemaText: string,
  ): Promise<{ schemaText: string; schemaFile: string; verdictFile: string; verdictName: string }> {
    const schemaFile = path.join(this.deps.layout.handoff.toAgent, 'review-verdict.schema.json');
    if ((await this.deps.fs.readTextIfExists(schemaFile)) !== schemaText)
      await this.deps.fs.writeAtomic(schemaFile, schemaText, 0o640);
    const verdictName = `${taskId}.review-${round}.${attempt}.json`;
    const verdictFile = path.join(this.deps.layout.handoff.fromAgent, verdictName);
    await onSide('agent', 'verdict file', () => freshVerdictFile(this.agent, verdictFile));
    return { schemaText, schemaFile, verdictFile, verdictName };
  }

  /**
   * A reviewer's verdict file copied into the runner's records by the no-follow walk: its text, or why it cannot be
   * read (a link, not a regular file, not the agent's, larger than maxBytes). Absent or empty is undefined text.
   */
  async takeVerdictFile(
    name: string,
    destination: string,
    maxBytes: number,
  ): Promise<{ readonly text: string | undefined } | { readonly problem: string }> {
    const { fromAgent } = this.deps.layout.handoff;
    let copied;
    try {
      copied = await this.deps.fs.copyUntrusted(fromAgent, name, maxBytes, destination);
    } catch (error) {
      return {
        problem: `the verdict file ${name} cannot be taken: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    if (!copied) return { text: undefined };
    const { agentUid } = this.deps.layout;
    if (agentUid !== undefined && copied.uid !== agentUid)
      return { problem: `the verdict file ${name} belongs to uid ${copied.uid}, not the agent's ${agentUid}` };
    return { text: await this.deps.fs.readText(destination) };
  }

  /** The task's checkout as it was handed over, after something ran in it that was not to change it (the pre-gate). */
  async restoreCheckout(taskId: TaskId, commit: string): Promise<void> {
    await onSide('agent', 'checkout restore', () => restoreCheckout(this.agent, this.agentDir(taskId), commit));
  }

  /** Why the reviewer's checkout is not the candidate it was given, clean, with the task's branch unmoved. */
  async reviewerChanged(taskId: TaskId, candidate: string): Promise<string | undefined> {
    return onSide('agent', 'look at its checkout', () =>
      checkoutChangedBy(this.agent, this.agentDir(taskId), taskBranch(taskId), candidate),
    );
  }

  /** A task is over: its worktree in the agent's repository waits for the next task (release removes the rest). */
  finishTask(taskId: TaskId): void {
    if (!this.spares.includes(taskId)) this.spares.push(taskId);
  }

  /** Removes the task's worktree and its branch in the agent's repository. */
  async removeTask(taskId: TaskId): Promise<void> {
    const repo = this.repositoryOf('agent');
    await this.deps.refs.run(async () => {
      await dropTree(this.agent, repo, this.agentDir(taskId));
      await this.agent.git.try(repo, ['branch', '-D', '--quiet', taskBranch(taskId)]);
    });
  }

  /** Checks `commit` out in the gate's own repository (its last candidate's worktree reused); the folder. */
  async prepareCandidate(commit: string): Promise<string> {
    await this.ensure('gate');
    const dir = gateCandidateDir(this.deps.layout.gateHome, 'current');
    await this.give(this.toGate, commit, (bundle) =>
      onSide('gate', 'checkout', () =>
        checkoutGiven(this.gate, { repo: this.repositoryOf('gate'), bundle, commit, dir, branch: undefined }),
      ),
    );
    return dir;
  }

  /** The end of a drain: spare worktrees and the bundles it gave are gone (the sides keep the objects). */
  async release(): Promise<void> {
    for (let spare = this.spares.pop(); spare; spare = this.spares.pop())
      await this.removeTask(spare).catch(() => undefined);
    await this.toAgent.removeAll();
    await this.toGate.removeAll();
  }
}
