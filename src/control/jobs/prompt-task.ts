// A free-text prompt job becomes a Backlog.md task before it runs: a new task
// file committed on the staging branch auto/work, by the repo's user (never
// root), with git plumbing only: no checkout, no worktree, no hook. The drain
// that follows merges the base branch in as usual, and the job then runs as
// `--task <new id>`. Written byte-compatible with `backlog task create`.
import type { Ports } from '../../ports.js';
import type { Command, RegistryRepo, TaskId } from '../../types.js';
import { gitCommand } from '../../git/git.js';
import {
  absoluteGitDirArgs,
  addBlobToIndexArgs,
  commitTreeArgs,
  hashObjectFromStdinArgs,
  listFileNamesArgs,
  readTreeArgs,
  updateRefArgs,
  verifyCommitArgs,
  writeTreeArgs,
} from '../../git/plumbing.js';
import { STAGING_BRANCH, STAGING_REF } from '../../staging/names.js';
import { dropPrivileges } from '../repo-user/index.js';
import { renderTaskFile, taskFileName as boardTaskFileName } from '../../board/render.js';
import { asSectionText, backlogTimestamp } from '../../board/edit.js';
import { BUILT_IN_DIRS, customDirectory, locateBoard, ROOT_CONFIG_FILE } from '../../board/location.js';
import { repoUser } from '../repo-user/index.js';
import type { Job } from './spool.js';

const ZERO_OID = '0000000000000000000000000000000000000000';

/** Pure: the title a prompt gets: its first non-empty line, at most 80 characters. */
export function titleOf(prompt: string): string {
  const line =
    prompt
      .split('\n')
      .map((text) => text.trim())
      .find(Boolean) ?? 'Queued prompt';
  return line.length > 80 ? `${line.slice(0, 77)}...` : line;
}

/** Pure: the file name the Backlog.md CLI gives a task (`task-7 - Fix-the-thing.md`). */
export function taskFileName(number: number, title: string): string {
  return boardTaskFileName(`TASK-${number}`, title);
}

/** Pure: the next task number after the files already in backlog/ (tasks, completed, archive). */
export function nextTaskNumber(paths: readonly string[]): number {
  let max = 0;
  for (const file of paths) {
    const match = /(?:^|\/)task-(\d+)(?:\.\d+)*\s/i.exec(file);
    if (match) max = Math.max(max, Number(match[1]));
  }
  return max + 1;
}

/** Pure: the task file for a prompt. */
export function promptTaskText(input: {
  id: TaskId;
  prompt: string;
  createdMs: number;
  labels: readonly string[];
}): string {
  return renderTaskFile({
    id: input.id,
    title: titleOf(input.prompt),
    createdDate: backlogTimestamp(input.createdMs),
    labels: input.labels,
    description: asSectionText(input.prompt.trim()),
  });
}

/** Creates the task for a prompt job on auto/work as the repo user; returns its id. */
export async function createPromptTask(ports: Ports, repo: RegistryRepo, job: Job): Promise<TaskId> {
  if (job.work.kind !== 'prompt') throw new Error(`job ${job.id} is not a prompt job`);
  const user = await repoUser(ports, repo);
  const env = { HOME: user.home, PATH: repo.toolchainPath, USER: user.name, LOGNAME: user.name };
  const identity = { name: repo.authorName ?? 'agent-runner', email: repo.authorEmail ?? 'agent-runner@localhost' };
  let indexFile = '';
  const run = async (args: readonly string[], stdin?: string, withIndex = false): Promise<string> => {
    const base = gitCommand(repo.path, args, { env, identity });
    const command: Command = {
      ...base,
      env: { ...base.env, ...(withIndex ? { GIT_INDEX_FILE: indexFile } : {}) },
      ...(stdin === undefined ? {} : { stdin }),
    };
    const result = await ports.process.run(dropPrivileges(user, command));
    if (result.exitCode !== 0)
      throw new Error(`creating the task for job ${job.id}: git ${args.join(' ')} failed: ${result.stderr.trim()}`);
    return result.stdout.trim();
  };
  const tryRef = async (ref: string) => {
    const result = await ports.process.run(dropPrivileges(user, gitCommand(repo.path, verifyCommitArgs(ref), { env })));
    return result.exitCode === 0 ? result.stdout.trim() : undefined;
  };
  // A private index in the user's own git dir, so the checkout's index is never touched.
  indexFile = `${await run(absoluteGitDirArgs())}/agent-runner-index-${job.id}`;
  const staging = await tryRef(STAGING_REF);
  const parent =
    staging ??
    (await tryRef(`refs/remotes/origin/${repo.baseBranch}`)) ??
    (await tryRef(`refs/heads/${repo.baseBranch}`));
  if (!parent)
    throw new Error(
      `creating the task for job ${job.id}: ${repo.path} has neither ${STAGING_BRANCH} nor ${repo.baseBranch}`,
    );
  // Where the board lives on that commit, by the CLI's rules (backlog/, .backlog/, or backlog.config.yml's folder).
  const listed = async (paths: readonly string[]) =>
    (await run(listFileNamesArgs(parent, ...paths))).split('\0').filter(Boolean);
  let files = await listed([ROOT_CONFIG_FILE, ...BUILT_IN_DIRS]);
  const rootConfig = files.includes(ROOT_CONFIG_FILE)
    ? await run(['cat-file', 'blob', `${parent}:${ROOT_CONFIG_FILE}`])
    : undefined;
  const custom = customDirectory(rootConfig);
  if (custom) files = [...files, ...(await listed([custom]))];
  const location = locateBoard({
    rootConfig,
    isFile: (file) => files.includes(file),
    isDir: (dir) => files.some((file) => file.startsWith(`${dir}/`)),
  });
  if (!location)
    throw new Error(
      `creating the task for job ${job.id}: ${parent.slice(0, 12)} in ${repo.path} has no Backlog.md board (run \`backlog init\` there)`,
    );
  const number = nextTaskNumber(files.filter((file) => file.startsWith(`${location.dir}/`)));
  const id = `TASK-${number}`;
  const text = promptTaskText({
    id,
    prompt: job.work.prompt,
    createdMs: Date.parse(job.createdAt) || 0,
    labels: job.model ? [`model:${job.model}`] : [],
  });
  const blob = await run(hashObjectFromStdinArgs(), text);
  try {
    await run(readTreeArgs(parent), undefined, true);
    await run(
      addBlobToIndexArgs(blob, `${location.tasksDir}/${taskFileName(number, titleOf(job.work.prompt))}`),
      undefined,
      true,
    );
    const tree = await run(writeTreeArgs(), undefined, true);
    const commit = await run(
      commitTreeArgs(tree, parent, `${id}: ${titleOf(job.work.prompt)}\n\nQueued as job ${job.id}.`),
    );
    // Compare-and-swap: fails if auto/work moved since we read it.
    await run(updateRefArgs(STAGING_REF, commit, staging ?? ZERO_OID, `agent-runner: queued prompt ${job.id}`));
  } finally {
    await ports.process.run(
      dropPrivileges(user, { program: 'rm', args: ['-f', indexFile], env: { PATH: '/usr/bin:/bin' }, cwd: '/' }),
    );
  }
  return id;
}
