// The board as root sees it: read from git objects as data, never a checkout,
// never a hook, never a write into the repo. One `git cat-file --batch-check`
// per tick resolves the tree ids of backlog/tasks on the staging and base
// branches; when they are unchanged the last answer is reused, and when they
// change only blobs not seen before are read. Git runs with
// safe.directory=<repo> because root does not own the checkout.
import type { ProcessPort } from '../ports.js';
import type { Board, Task, UnreadableTask } from '../types.js';
import { catFileBatch, catFileBatchCheck, lsTree } from '../git/outsider.js';
import { parseTaskFile } from '../board/parse.js';
import { assessReadiness } from '../board/readiness.js';
import { assembleBoard, CONFIG_FILE, statusesFrom, TASKS_DIR } from '../board/read.js';
import { isParked } from '../board/parking.js';
import { STAGING_BRANCH, STAGING_REF } from '../staging/names.js';

export interface BoardSummary {
  /** Which refs the board was read from; empty when neither exists. */
  readonly refs: readonly string[];
  readonly ready: readonly string[];
  readonly parked: number;
  readonly unreadable: number;
  readonly total: number;
}

interface Cached {
  readonly key: string;
  readonly summary: BoardSummary;
}

/** Pure: `cat-file --batch-check` output to oid per requested object name (absent when missing). */
export function parseBatchCheck(names: readonly string[], stdout: string): (string | undefined)[] {
  const lines = stdout.split('\n');
  return names.map((_, index) => {
    const line = lines[index] ?? '';
    const match = /^([0-9a-f]{40,64}) (tree|blob|commit)/.exec(line);
    return match ? match[1] : undefined;
  });
}

/** Pure: `ls-tree` lines to [blob oid, file name] of the markdown files. */
export function parseLsTree(stdout: string): [string, string][] {
  const entries: [string, string][] = [];
  for (const line of stdout.split('\n')) {
    const match = /^\d+ blob ([0-9a-f]{40,64})\t(.+)$/.exec(line);
    if (match && match[2]!.endsWith('.md')) entries.push([match[1]!, match[2]!]);
  }
  return entries;
}

/** Pure: `cat-file --batch` output to the contents, in request order. */
export function parseBatch(stdout: Buffer | string, count: number): string[] {
  const buffer = typeof stdout === 'string' ? Buffer.from(stdout, 'utf8') : stdout;
  const texts: string[] = [];
  let offset = 0;
  for (let i = 0; i < count; i++) {
    const newline = buffer.indexOf(0x0a, offset);
    if (newline < 0) break;
    const header = buffer.subarray(offset, newline).toString('utf8').split(' ');
    const size = Number(header[2]);
    if (header[1] === 'missing' || !Number.isFinite(size)) {
      texts.push('');
      offset = newline + 1;
      continue;
    }
    texts.push(buffer.subarray(newline + 1, newline + 1 + size).toString('utf8'));
    offset = newline + 1 + size + 1;
  }
  return texts;
}

/**
 * Pure: the board a drain would see: the staging board, plus tasks filed on
 * the base branch that staging has not absorbed yet (the drain merges base in).
 */
export function combineBoards(staging: Board | undefined, base: Board | undefined): Board {
  if (!staging) return base ?? { tasks: [], unreadable: [], statuses: statusesFrom(undefined) };
  if (!base) return staging;
  const known = new Set(staging.tasks.map((task) => task.id.toUpperCase()));
  return {
    tasks: [...staging.tasks, ...base.tasks.filter((task) => !known.has(task.id.toUpperCase()))],
    unreadable: staging.unreadable,
    statuses: staging.statuses,
  };
}

function summarize(board: Board, refs: readonly string[]): BoardSummary {
  const readiness = assessReadiness(board);
  return {
    refs,
    ready: readiness.ready.map((task) => task.id),
    parked: board.tasks.filter(isParked).length,
    unreadable: board.unreadable.length,
    total: board.tasks.length + board.unreadable.length,
  };
}

export class BoardReadError extends Error {}

/** Reads one repo's board as data, caching by tree id and by blob id. Not shared between repos. */
export class BoardSnapshot {
  private cached: Cached | undefined;
  private readonly blobs = new Map<string, Task | UnreadableTask>();
  private readonly live = new Set<string>();

  constructor(
    private readonly process: ProcessPort,
    private readonly repoPath: string,
    private readonly baseBranch: string,
  ) {}

  /**
   * The commits of auto/work, origin/<base> and <base> as the last summary()
   * read them (the same git call): fleet compares staging with the base
   * without asking git for the refs again.
   */
  commits: { readonly staging: string | undefined; readonly originBase: string | undefined; readonly localBase: string | undefined } | undefined;

  async summary(): Promise<BoardSummary> {
    const refs = [STAGING_REF, `refs/remotes/origin/${this.baseBranch}`, `refs/heads/${this.baseBranch}`];
    const names = [...refs.flatMap((ref) => [`${ref}:${TASKS_DIR}`, `${ref}:${CONFIG_FILE}`]), ...refs.map((ref) => `${ref}^{commit}`)];
    const check = await this.process.run(catFileBatchCheck(this.repoPath, names));
    if (check.exitCode !== 0) throw new BoardReadError(`cannot read the git objects of ${this.repoPath}: ${check.stderr.trim() || `git exited ${check.exitCode}`}`);
    const oids = parseBatchCheck(names, check.stdout);
    const [staging0, origin0, local0] = oids.slice(refs.length * 2);
    this.commits = { staging: staging0, originBase: origin0, localBase: local0 };
    const trees = refs.map((ref, i) => ({ ref, tasks: oids[i * 2], config: oids[i * 2 + 1] }));
    const staging = trees[0]!;
    // origin/<base> when it exists (what the drain merges), else the local base.
    const base = trees[1]!.tasks ? trees[1]! : trees[2]!;
    const key = `${staging.tasks}/${staging.config}/${base.tasks}/${base.config}`;
    if (this.cached?.key === key) return this.cached.summary;
    this.live.clear();
    const stagingBoard = staging.tasks ? await this.board(staging.tasks, staging.config) : undefined;
    const baseBoard = base.tasks && base.tasks !== staging.tasks ? await this.board(base.tasks, base.config) : undefined;
    // Forget parsed blobs no longer on either board, so the cache stays the size of the board.
    for (const oid of this.blobs.keys()) if (!this.live.has(oid)) this.blobs.delete(oid);
    const used = [stagingBoard ? STAGING_BRANCH : undefined, baseBoard ? base.ref.replace(/^refs\/(heads|remotes)\//, '') : undefined].filter((ref): ref is string => ref !== undefined);
    const summary = summarize(combineBoards(stagingBoard, baseBoard), used);
    this.cached = { key, summary };
    return summary;
  }

  private async board(tree: string, config: string | undefined): Promise<Board> {
    const listing = await this.process.run(lsTree(this.repoPath, tree));
    if (listing.exitCode !== 0) throw new BoardReadError(`cannot list ${TASKS_DIR} in ${this.repoPath}: ${listing.stderr.trim()}`);
    const entries = parseLsTree(listing.stdout);
    for (const [oid] of entries) this.live.add(oid);
    const wanted = [...new Set(entries.map(([oid]) => oid).filter((oid) => !this.blobs.has(oid)))];
    const toRead = config ? [...wanted, config] : wanted;
    let configText: string | undefined;
    if (toRead.length) {
      const batch = await this.process.run(catFileBatch(this.repoPath, toRead));
      if (batch.exitCode !== 0) throw new BoardReadError(`cannot read task files in ${this.repoPath}: ${batch.stderr.trim()}`);
      const texts = parseBatch(batch.stdout, toRead.length);
      const fileOf = new Map(entries);
      wanted.forEach((oid, i) => this.blobs.set(oid, parseTaskFile(`${TASKS_DIR}/${fileOf.get(oid)!}`, texts[i] ?? '')));
      if (config) configText = texts[wanted.length];
    }
    // The same rules as a drain's own read: a duplicated id makes both files unreadable.
    return assembleBoard(entries.map(([oid, file]) => ({ ...this.blobs.get(oid)!, file: `${TASKS_DIR}/${file}` })), configText);
  }
}
