// agent-runner side: the agent's (or the gate's) half of the hand-off, run
// as that identity on the runner's behalf (through root's launcher, or
// directly when one user plays every part). Each step prints one JSON object
// on stdout, which the runner reads as data: checkout (fill the side's own
// repository from the runner's bundle and cut a worktree), state (how a
// task's tree stands), hand-over (bundle the task's branch back), remove.
import * as path from 'node:path';
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT, UsageError } from '../errors.js';
import { Git, type GitIdentity } from '../git/git.js';
import { isSafeTaskId } from '../board/parse.js';
import { checkoutGiven, clearSide, handOverTask, removeCheckout, treeStateOf } from '../handoff/side.js';
import { agentBaseEnv } from '../agent/env.js';

const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
const BRANCH = /^auto\/[A-Za-z0-9][A-Za-z0-9._-]{0,80}$/;
const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

function absolute(flag: string, value: string | undefined): string {
  if (!value || !path.isAbsolute(value)) throw new UsageError(`${flag} must be an absolute path`);
  return path.normalize(value);
}

function matching(flag: string, value: string | undefined, pattern: RegExp, what: string): string {
  if (value === undefined || !pattern.test(value)) throw new UsageError(`${flag} "${value ?? ''}" is not ${what}`);
  return value;
}

function taskId(value: string | undefined): string {
  if (!value || !isSafeTaskId(value)) throw new UsageError(`--task "${value ?? ''}" is not a task id (like TASK-12)`);
  return value;
}

function author(name: string | undefined, email: string | undefined): GitIdentity | undefined {
  if (name === undefined && email === undefined) return undefined;
  if (!name || !email || /[<>\n]/.test(name + email))
    throw new UsageError('--author-name and --author-email go together, without <, > or newlines');
  return { name, email };
}

interface SideOptions {
  repo?: string;
  bundle?: string;
  commit?: string;
  dir?: string;
  branch?: string;
  task?: string;
  base?: string;
  out?: string;
  name?: string;
  authorName?: string;
  authorEmail?: string;
  reuseDir?: string;
  reuseBranch?: string;
}

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  const git = () => new Git(context.ports.process, { env: agentBaseEnv(context.env, []), files: context.ports.fs });
  const { fs } = context.ports;
  const print = (value: unknown) => {
    context.out(`${JSON.stringify(value)}\n`);
    setExit(EXIT.ok);
  };
  command.description("the agent's or gate's half of the hand-off (the runner starts it; not for people)");
  command
    .command('checkout')
    .option('--repo <dir>')
    .option('--bundle <file>')
    .option('--commit <sha>')
    .option('--dir <dir>')
    .option('--branch <name>')
    .option('--author-name <name>')
    .option('--author-email <email>')
    .option('--reuse-dir <dir>', "a finished task's worktree to make this one of")
    .option('--reuse-branch <name>', 'its branch, which goes')
    .action(async (options: SideOptions) => {
      const commit = matching('--commit', options.commit, COMMIT, 'a commit id');
      const reuse =
        options.reuseDir === undefined
          ? undefined
          : {
              dir: absolute('--reuse-dir', options.reuseDir),
              branch: matching('--reuse-branch', options.reuseBranch, BRANCH, 'a task branch'),
            };
      const branch =
        options.branch === undefined ? undefined : matching('--branch', options.branch, BRANCH, 'a task branch');
      await checkoutGiven(git(), fs, {
        repo: absolute('--repo', options.repo),
        bundle: absolute('--bundle', options.bundle),
        commit,
        dir: absolute('--dir', options.dir),
        branch,
        author: author(options.authorName, options.authorEmail),
        ...(reuse ? { reuse } : {}),
      });
      print({ checkedOut: commit });
    });
  command
    .command('state')
    .option('--dir <dir>')
    .option('--task <id>')
    .action(async (options: SideOptions) => {
      print(await treeStateOf(git(), fs, absolute('--dir', options.dir), taskId(options.task)));
    });
  command
    .command('hand-over')
    .option('--dir <dir>')
    .option('--task <id>')
    .option('--branch <name>')
    .option('--base <sha>')
    .option('--out <dir>')
    .option('--name <file>')
    .action(async (options: SideOptions) => {
      const handed = await handOverTask(git(), fs, {
        dir: absolute('--dir', options.dir),
        taskId: taskId(options.task),
        branch: matching('--branch', options.branch, BRANCH, 'a task branch'),
        base: matching('--base', options.base, COMMIT, 'a commit id'),
        out: absolute('--out', options.out),
        name: matching('--name', options.name, FILE_NAME, 'a file name'),
      });
      if (typeof handed === 'string') {
        print({ refused: handed });
        return;
      }
      print(handed);
    });
  command
    .command('clear')
    .option('--repo <dir>')
    .option('--dir <dir>', 'the folder the task worktrees are in')
    .action(async (options: SideOptions) => {
      print({ cleared: await clearSide(git(), fs, absolute('--repo', options.repo), absolute('--dir', options.dir)) });
    });
  command
    .command('remove')
    .option('--repo <dir>')
    .option('--dir <dir>')
    .option('--branch <name>')
    .action(async (options: SideOptions) => {
      const branch =
        options.branch === undefined ? undefined : matching('--branch', options.branch, BRANCH, 'a task branch');
      await removeCheckout(git(), fs, absolute('--repo', options.repo), absolute('--dir', options.dir), branch);
      print({ removed: true });
    });
}
