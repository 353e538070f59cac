// Which git lock files are stale, which processes a gone run left (a table over builder facts), and what of git's
// output a failed command keeps (the line that names the lock's path).
import t from 'tap';
import { judgeGitLocks, type RepositoryProcessFacts } from '../../src/drain/verdict/git-locks.js';
import { gitsLastWords } from '../../src/git/git.js';
import { parseStartedBy, startedByValue } from '../../src/process-identity.js';

const INDEX = '/r/.git/worktrees/staging/index.lock';
const REF = '/r/.git/refs/heads/auto/work.lock';
const SELF = { pid: 500, uid: 1001 };

/** A git the runner started, working in the repository: its starter (pid 90) is gone unless said otherwise. */
function aGit(fields: Partial<RepositoryProcessFacts> = {}): RepositoryProcessFacts {
  return {
    pid: 40,
    name: 'git',
    startTime: '7000',
    uid: SELF.uid,
    pgid: 40,
    file: undefined,
    inDirs: true,
    startedBy: { pid: 90, startTime: '6000' },
    starterRunning: false,
    ...fields,
  };
}

t.test('git locks and the processes in the repository (table)', async (t) => {
  const rows: {
    name: string;
    processes: RepositoryProcessFacts[];
    alreadyEnded?: string[];
    end: number[];
    remove: string[];
    busy: string[];
  }[] = [
    { name: 'no process at all: both stale', processes: [], end: [], remove: [INDEX, REF], busy: [] },
    {
      name: "a gone run's git holding one: ended, that lock waits for a second look, the other is stale",
      processes: [aGit({ file: INDEX })],
      end: [40],
      remove: [REF],
      busy: [],
    },
    {
      name: "a gone run's git merely working in the repository: ended, holds nothing up",
      processes: [aGit()],
      end: [40],
      remove: [INDEX, REF],
      busy: [],
    },
    {
      name: "a gone run's filter (not a group leader, not named git): ended too",
      processes: [aGit({ pid: 41, name: 'filter.sh', pgid: 40 })],
      end: [41],
      remove: [INDEX, REF],
      busy: [],
    },
    {
      name: "a live run's git holding one: busy, named with its live starter, never ended",
      processes: [aGit({ file: INDEX, starterRunning: true })],
      end: [],
      remove: [REF],
      busy: [
        `${INDEX} is held by git pid 40, started by agent-runner pid 90, which is running; wait for it to finish, then run again`,
      ],
    },
    {
      name: 'a git no run started (no identity) holding one: busy, never ended',
      processes: [aGit({ file: INDEX, startedBy: undefined })],
      end: [],
      remove: [REF],
      busy: [
        `${INDEX} is held by git pid 40, which no live or gone agent-runner run is known to have started; wait for it to finish, then run again`,
      ],
    },
    {
      name: "another user's process with a gone starter: never ended, busy",
      processes: [aGit({ file: INDEX, uid: 0 })],
      end: [],
      remove: [REF],
      busy: [
        `${INDEX} is held by git pid 40, which no live or gone agent-runner run is known to have started; wait for it to finish, then run again`,
      ],
    },
    {
      name: 'a process whose start time is unknown: never ended (it could not be told from a recycled pid)',
      processes: [aGit({ file: INDEX, startTime: undefined })],
      end: [],
      remove: [REF],
      busy: [
        `${INDEX} is held by git pid 40, which no live or gone agent-runner run is known to have started; wait for it to finish, then run again`,
      ],
    },
    {
      name: 'a gone-starter process outside the repository holding nothing of it: not ours to end',
      processes: [aGit({ inDirs: false })],
      end: [],
      remove: [INDEX, REF],
      busy: [],
    },
    {
      name: 'a live git working in the repository may hold any lock closed: all busy',
      processes: [aGit({ startedBy: undefined })],
      end: [],
      remove: [],
      busy: [INDEX, REF].map(
        (file) =>
          `${file} may be held by a git working in the repository (git pid 40, which no live or gone agent-runner run is known to have started); wait for it to finish, then run again; if no git runs there, remove the file`,
      ),
    },
    {
      name: 'a live shell sitting in the checkout holds nothing: the locks are stale',
      processes: [aGit({ name: 'bash', startedBy: undefined })],
      end: [],
      remove: [INDEX, REF],
      busy: [],
    },
    {
      name: 'this process (the starter is itself) is never a holder, never ended',
      processes: [aGit({ pid: SELF.pid, file: INDEX })],
      end: [],
      remove: [INDEX, REF],
      busy: [],
    },
    {
      name: 'a git naming this process as its starter (pid and start time) belongs to a live run',
      processes: [aGit({ file: INDEX, startedBy: { pid: SELF.pid, startTime: '1' }, starterRunning: true })],
      end: [],
      remove: [REF],
      busy: [
        `${INDEX} is held by git pid 40, started by agent-runner pid 500, which is running; wait for it to finish, then run again`,
      ],
    },
    {
      name: "a starter's pid now someone else's (another start time): the starter is gone",
      processes: [aGit({ file: INDEX, startedBy: { pid: SELF.pid, startTime: '1' }, starterRunning: false })],
      end: [40],
      remove: [REF],
      busy: [],
    },
    {
      name: 'ended once and still there: busy, saying it would not end',
      processes: [aGit({ file: INDEX })],
      alreadyEnded: ['40:7000'],
      end: [],
      remove: [REF],
      busy: [
        `${INDEX} is held by git pid 40, left by agent-runner pid 90, which is gone; it did not end on SIGKILL; wait for it to finish, then run again`,
      ],
    },
  ];
  for (const row of rows) {
    const verdict = judgeGitLocks({
      locks: [INDEX, REF],
      processes: row.processes,
      self: SELF,
      alreadyEnded: new Set(row.alreadyEnded ?? []),
    });
    t.same(
      verdict.end.map((left) => left.pid),
      row.end,
      `${row.name}: ended`,
    );
    t.same(verdict.remove, row.remove, `${row.name}: removed`);
    t.same(
      verdict.busy.map((held) => held.reason),
      row.busy,
      `${row.name}: busy`,
    );
  }
});

t.test('a group leader is ended by its group, a member alone', async (t) => {
  const verdict = judgeGitLocks({
    locks: [],
    processes: [aGit(), aGit({ pid: 41, name: 'filter.sh', pgid: 40 })],
    self: SELF,
    alreadyEnded: new Set(),
  });
  t.same(
    verdict.end.map((left) => [left.pid, left.leadsGroup, left.starter]),
    [
      [40, true, 90],
      [41, false, 90],
    ],
  );
});

t.test('the starter identity a git carries: pid and start time, or nothing', async (t) => {
  t.equal(startedByValue({ pid: 1234, startTime: '98765' }), '1234:98765');
  t.equal(startedByValue({ pid: 1234, startTime: undefined }), undefined, 'no start time proves nothing: not set');
  t.equal(startedByValue({ pid: 1, startTime: '5' }), undefined, 'init is nobody');
  t.same(parseStartedBy('1234:98765'), { pid: 1234, startTime: '98765' });
  for (const bad of [undefined, '', '1234', '1234:', ':5', '1:5', 'x:5', '12:5 ', '12:5:6', '-3:5'])
    t.equal(parseStartedBy(bad), undefined, `${JSON.stringify(bad)} names no process`);
});

t.test("git's last words keep the line that names the path", async (t) => {
  const stderr = [
    "fatal: Unable to create '/r/.git/worktrees/staging/index.lock': File exists.",
    '',
    'Another git process seems to be running in this repository, e.g.',
    "an editor opened by 'git commit'. Please make sure all processes",
    'are terminated then try again. If it still fails, a git process',
    'may have crashed in this repository earlier:',
    'remove the file manually to continue.',
  ].join('\n');
  const words = gitsLastWords(stderr);
  t.match(
    words,
    /^fatal: Unable to create '\/r\/\.git\/worktrees\/staging\/index\.lock': File exists\. \| /,
    'the path comes first',
  );
  t.match(words, /remove the file manually to continue\.$/, 'and the last words last');
  t.equal(gitsLastWords('error: one\nerror: one'), 'error: one', 'no repeats');
  t.equal(gitsLastWords('a\nb\nc\nd'), 'b | c | d', 'plain output: the last three lines');
});
