// A task's bundle is hostile input to the runner. Each row hands over a
// bundle an agent could make (or plant in the folder it writes) and checks it
// is refused with its reason while nothing in the runner's repository
// changes; the control row shows a proper bundle is accepted, so the refusals
// are not a check that refuses everything.
import t from 'tap';
import { mkfifoSync } from '../helpers/fifo.js';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { realPorts } from '../../src/io/real-ports.js';
import { Git } from '../../src/git/git.js';
import { acceptTaskBundle, type TaskBundle } from '../../src/handoff/accept.js';
import { git, GIT_TEST_ENV, tempDir } from '../helpers/temp.js';

const ports = realPorts();
const runnerGit = new Git(ports.process, { env: GIT_TEST_ENV, files: ports.fs });

interface Sides {
  readonly runner: string;
  readonly agent: string;
  readonly out: string;
  readonly scratch: string;
  readonly base: string;
}

/** A runner repository with main and auto/work, and an agent clone of it with auto/TASK-1 one commit ahead. */
function sides(t: Parameters<typeof tempDir>[0]): Sides {
  const root = tempDir(t, 'agent-runner-accept-');
  const runner = path.join(root, 'runner');
  git(root, 'init', '-q', runner);
  writeFileSync(path.join(runner, 'README'), 'one\n');
  git(runner, 'add', '-A');
  git(runner, 'commit', '-q', '-m', 'base');
  git(runner, 'branch', 'auto/work');
  const base = git(runner, 'rev-parse', 'HEAD');
  const agent = path.join(root, 'agent');
  git(root, 'clone', '-q', runner, agent);
  git(agent, 'checkout', '-q', '-b', 'auto/TASK-1');
  writeFileSync(path.join(agent, 'work.txt'), 'done\n');
  git(agent, 'add', '-A');
  git(agent, 'commit', '-q', '-m', 'TASK-1 done');
  const out = path.join(root, 'from-agent');
  const scratch = path.join(root, 'scratch');
  for (const dir of [out, scratch]) mkdirSync(dir);
  return { runner, agent, out, scratch, base };
}

function bundleOf(s: Sides, name: string, ...revs: string[]): string {
  git(s.agent, 'bundle', 'create', '-q', path.join(s.out, name), ...revs);
  return name;
}

function refsOf(repo: string): string {
  return git(repo, 'for-each-ref', '--format=%(refname) %(objectname)');
}

function request(s: Sides, name: string, overrides: Partial<TaskBundle> = {}): TaskBundle {
  return {
    dir: s.out,
    name,
    branch: 'auto/TASK-1',
    base: s.base,
    maxBytes: 10 * 1024 * 1024,
    ownerUid: process.getuid!(),
    scratch: s.scratch,
    ...overrides,
  };
}

t.test('a proper bundle of the task branch is accepted onto the runner branch', async (t) => {
  const s = sides(t);
  const name = bundleOf(s, 'good.bundle', `${s.base}..auto/TASK-1`);
  const result = await acceptTaskBundle(runnerGit, ports.fs, s.runner, request(s, name));
  t.ok(result.accepted, JSON.stringify(result));
  t.equal(git(s.runner, 'rev-parse', 'refs/heads/auto/TASK-1'), git(s.agent, 'rev-parse', 'auto/TASK-1'));
  t.notOk(refsOf(s.runner).includes('incoming'), 'no incoming ref is left');
});

const hostile: readonly {
  name: string;
  make: (s: Sides) => { name: string; overrides?: Partial<TaskBundle> };
  reason: RegExp;
}[] = [
  {
    name: 'a bundle naming main',
    make: (s) => {
      git(s.agent, 'branch', '-f', 'main', 'auto/TASK-1');
      return { name: bundleOf(s, 'main.bundle', `${s.base}..main`) };
    },
    reason: /names refs\/heads\/main; it may name refs\/heads\/auto\/TASK-1 alone/,
  },
  {
    name: 'a bundle naming auto/work',
    make: (s) => {
      git(s.agent, 'branch', '-f', 'auto/work', 'auto/TASK-1');
      return { name: bundleOf(s, 'work.bundle', `${s.base}..auto/work`) };
    },
    reason: /names refs\/heads\/auto\/work/,
  },
  {
    name: 'a bundle with an extra ref beside the task branch',
    make: (s) => {
      git(s.agent, 'tag', 'v9', 'auto/TASK-1');
      return { name: bundleOf(s, 'extra.bundle', `${s.base}..auto/TASK-1`, 'v9') };
    },
    reason: /names refs\/tags\/v9/,
  },
  {
    name: 'a bundle carrying a malformed commit object',
    make: (s) => {
      const tree = git(s.agent, 'rev-parse', 'auto/TASK-1^{tree}');
      // No author line and a bad committer: git's fsck refuses it, git itself would never write it.
      const body = `tree ${tree}\nparent ${s.base}\ncommitter no-email-here 0 +0000\n\nforged\n`;
      writeFileSync(path.join(s.agent, '.forged'), body);
      const forged = git(s.agent, 'hash-object', '-t', 'commit', '--literally', '-w', '.forged');
      git(s.agent, 'update-ref', 'refs/heads/auto/TASK-1', forged);
      return { name: bundleOf(s, 'forged.bundle', `${s.base}..auto/TASK-1`) };
    },
    reason: /git fetch from the bundle: .*(fsck|missingAuthor|bad|error)/i,
  },
  {
    name: 'a file that is not a bundle',
    make: (s) => {
      writeFileSync(path.join(s.out, 'junk.bundle'), '# v2 git bundle\nnot an object id\n\nPACKgarbage');
      return { name: 'junk.bundle' };
    },
    reason: /git bundle verify/,
  },
  {
    name: 'a bundle larger than the bound',
    make: (s) => ({ name: bundleOf(s, 'big.bundle', `${s.base}..auto/TASK-1`), overrides: { maxBytes: 64 } }),
    reason: /more than the 64 allowed/,
  },
  {
    name: 'a branch that does not descend from the base',
    make: (s) => {
      git(s.agent, 'checkout', '-q', '--orphan', 'rogue');
      writeFileSync(path.join(s.agent, 'other.txt'), 'x\n');
      git(s.agent, 'add', '-A');
      git(s.agent, 'commit', '-q', '-m', 'unrelated history');
      git(s.agent, 'branch', '-f', 'auto/TASK-1', 'rogue');
      return { name: bundleOf(s, 'orphan.bundle', 'auto/TASK-1') };
    },
    reason: /does not descend from/,
  },
  {
    name: 'a thin bundle whose prerequisite the runner lacks',
    make: (s) => {
      const first = git(s.agent, 'rev-parse', 'auto/TASK-1');
      writeFileSync(path.join(s.agent, 'more.txt'), 'more\n');
      git(s.agent, 'add', '-A');
      git(s.agent, 'commit', '-q', '-m', 'more');
      return { name: bundleOf(s, 'thin.bundle', `${first}..auto/TASK-1`) };
    },
    reason: /git bundle verify: .*(lacks|prerequisite|missing)/i,
  },
  {
    name: 'a symbolic link to a file of the runner',
    make: (s) => {
      symlinkSync(path.join(s.runner, '.git', 'config'), path.join(s.out, 'link.bundle'));
      return { name: 'link.bundle' };
    },
    reason: /symbolic link/,
  },
  {
    name: 'a FIFO where the bundle should be',
    make: (s) => {
      mkfifoSync(path.join(s.out, 'fifo.bundle'));
      return { name: 'fifo.bundle' };
    },
    reason: /not a regular file/,
  },
  {
    name: 'a bundle of someone else',
    make: (s) => ({
      name: bundleOf(s, 'other-owner.bundle', `${s.base}..auto/TASK-1`),
      overrides: { ownerUid: process.getuid!() + 1 },
    }),
    reason: /belongs to uid \d+, not the agent's/,
  },
  {
    name: 'no bundle at all',
    make: () => ({ name: 'missing.bundle' }),
    reason: /no bundle .* was handed over/,
  },
  {
    name: 'an empty file',
    make: (s) => {
      writeFileSync(path.join(s.out, 'empty.bundle'), '');
      return { name: 'empty.bundle' };
    },
    reason: /git bundle verify/,
  },
];

for (const row of hostile) {
  t.test(`refused: ${row.name}`, async (t) => {
    const s = sides(t);
    const before = refsOf(s.runner);
    const objectsBefore = git(s.runner, 'count-objects', '-v');
    const made = row.make(s);
    const result = await acceptTaskBundle(runnerGit, ports.fs, s.runner, request(s, made.name, made.overrides));
    t.notOk(result.accepted, 'refused');
    if (!result.accepted) {
      t.match(result.reason, row.reason, result.reason);
      t.match(result.reason, /^the hand-over of auto\/TASK-1 was refused: /);
    }
    t.equal(refsOf(s.runner), before, 'no ref of the runner changed');
    if (!/descend/.test(row.name)) t.equal(git(s.runner, 'count-objects', '-v'), objectsBefore, 'no object arrived');
  });
}
