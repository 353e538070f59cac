// A hostile repo user, for tests of every root-side command: what an agent
// that owns a repo user could leave in its home and clone to make root act
// for it. Everything planted is real (links, FIFOs, git config, hooks,
// processes); every planted program records `id -u` in the marker dir and
// tries to type a command into its terminal (TIOCSTI on /dev/tty), so a test
// can tell whether root ran it, the user ran it, and whether a keystroke got
// through. The victim side (another repo user's token, a root-only file, a
// root-owned directory, a root process) is made here too. Everything is
// removed in t.teardown, pass or fail; processes are ended by pid.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import type { Test } from 'tap';
import { tempDir } from './temp.js';
import { startSleeper, startTimeOf } from './user-processes.js';
import { testUser, type TestUser } from './netns.js';
import { repoUserStateDir, workspaceStateDir } from '../../src/paths.js';

/** Text that must never reach root's output (a control sequence an agent puts in a title or reason). */
export const ANSI_TITLE = 'Hostile \u001b]0;owned\u0007\u001b[2J\u001b[31mred\u001b[0m title';

/** Characters an agent's text must never bring raw to root's terminal. */
// eslint-disable-next-line no-control-regex -- the point is to find control characters
export const RAW_CONTROL = /[\u001b\u0007\u009b]/;

export interface Victim {
  /** A second repo user, with a git token in ~/.git-credentials. */
  readonly user: TestUser;
  readonly credentials: string;
  readonly token: string;
  /** A file only root may read (0600 root), with a secret in it. */
  readonly rootOnlyFile: string;
  readonly rootSecret: string;
  /** A root-owned directory (0755) that must stay empty. */
  readonly rootDir: string;
  /** A root process leading its own group, that must outlive every command. */
  readonly pid: number;
  readonly startTime: string;
  /** Every victim file with its content now, to compare after a command. */
  snapshot(): Record<string, string>;
}

/** The victim side: another repo user with a token, a root-only file, a root-owned dir, a root process. */
export function makeVictim(t: Test): Victim {
  const user = testUser(t);
  const token = `ghp_victim${randomBytes(12).toString('hex')}`;
  const credentials = path.join(user.home, '.git-credentials');
  // No Blocked status in it: a provision that reads it as a board config would want to write it.
  writeFileSync(credentials, `https://victim:${token}@example.invalid\n`, { mode: 0o600 });
  execFileSync('chown', [`${user.uid}:${user.gid}`, credentials]);
  const root = tempDir(t, 'agent-runner-victim-');
  chmodSync(root, 0o755);
  const rootSecret = `root-secret-${randomBytes(12).toString('hex')}`;
  const rootOnlyFile = path.join(root, 'root-only');
  writeFileSync(rootOnlyFile, `{"gates": "${rootSecret}"}\n`, { mode: 0o600 });
  const rootDir = path.join(root, 'root-dir');
  mkdirSync(rootDir, { mode: 0o755 });
  // A board config a root-side writer would want to change (no Blocked), so a followed link shows.
  writeFileSync(path.join(rootDir, 'config.yml'), 'project_name: "root"\nstatuses: ["To Do", "Done"]\n', {
    mode: 0o644,
  });
  const pid = startSleeper(t);
  const files = [credentials, rootOnlyFile, path.join(rootDir, 'config.yml')];
  return {
    user,
    credentials,
    token,
    rootOnlyFile,
    rootSecret,
    rootDir,
    pid,
    startTime: startTimeOf(pid),
    snapshot: () => ({
      ...Object.fromEntries(files.map((file) => [file, existsSync(file) ? readFileSync(file, 'utf8') : '(missing)'])),
      [rootDir]: readdirSync(rootDir).sort().join(','),
    }),
  };
}

export interface Target {
  readonly user: string;
  readonly home: string;
  readonly clone: string;
}

export interface Marker {
  readonly label: string;
  readonly uid: number;
  readonly text: string;
}

/** The planted programs and what they leave behind; made before any user, so a fixture can name them. */
export interface Programs {
  /** World-writable; planted programs append `<label>.<uid>` files here (`<label>-tty.<uid>`: the TIOCSTI attempt). */
  readonly markerDir: string;
  /** Created only if a keystroke pushed into a terminal was run by a shell. */
  readonly injectedFile: string;
  /** A planted program: records `id -u`, tries TIOCSTI; `label` names its marker. */
  program(label: string): string;
  /** Every marker written so far. */
  markers(): Marker[];
}

export interface Kit extends Programs {
  readonly target: Target;
  readonly uid: number;
  /** As root: a link at `at` (absolute, in the target's tree) to `to`, owned by the user. */
  link(at: string, to: string): void;
  fifo(at: string): void;
  oversized(at: string, bytes?: number): void;
  /**
   * Hooks for every event, core.fsmonitor, core.hooksPath and the rest of the
   * hostile config; with filters, a clean/smudge/process filter on every file
   * too (it breaks the user's own checkouts, so legitimate drains fail).
   */
  hostileGitConfig(options?: { filters?: boolean }): void;
  /** A forged agent record naming `pid` (right pid and start time) where the repo user's drain keeps them. */
  forgedAgentRecord(workspace: string, pid: number, taskId?: string): string;
  /** The repo user's state dir for a workspace (~/.agent-runner/workspaces/<key>). */
  workspaceState(workspace: string): string;
  /** Processes as the user listening on these loopback ports (argv prefix: e.g. ip netns exec NS). */
  squatPorts(ports: readonly number[], prefix?: readonly string[]): Promise<void>;
  /** Runs argv as the target user (setpriv, clean env), in a new session. */
  asUser(argv: readonly string[], cwd?: string): { status: number | null; stdout: string; stderr: string };
}

const HOOKS = [
  'pre-commit',
  'prepare-commit-msg',
  'commit-msg',
  'post-commit',
  'pre-rebase',
  'post-checkout',
  'post-merge',
  'pre-push',
  'reference-transaction',
  'post-rewrite',
  'pre-auto-gc',
  'post-index-change',
  'push-to-checkout',
  'fsmonitor-watchman',
  'pre-merge-commit',
];

/** The planted program: who ran it, then TIOCSTI of a command that would create injectedFile. */
function programText(markerDir: string, label: string, injectedFile: string): string {
  const typed = `touch ${injectedFile}\n`;
  return `#!/bin/sh
u=$(id -u)
echo "$u $*" >> '${markerDir}/${label}.'"$u"
/usr/bin/perl -e 'if (open(my $t, "+<", "/dev/tty")) { for my $c (split //, $ARGV[0]) { ioctl($t, 0x5412, $c) or do { print "ioctl: $!\\n"; exit 0 } } print "typed\\n" } else { print "open /dev/tty: $!\\n" }' '${typed}' >> '${markerDir}/${label}-tty.'"$u" 2>&1
exit 0
`;
}

export function hostilePrograms(t: Test): Programs & { readonly base: string } {
  const base = tempDir(t, 'agent-runner-hostile-');
  chmodSync(base, 0o755);
  const markerDir = path.join(base, 'markers');
  mkdirSync(markerDir);
  chmodSync(markerDir, 0o1777);
  const programs = path.join(base, 'programs');
  mkdirSync(programs, { mode: 0o755 });
  const injectedFile = path.join(markerDir, 'INJECTED');
  return {
    base,
    markerDir,
    injectedFile,
    program(label) {
      const file = path.join(programs, label);
      if (!existsSync(file)) writeFileSync(file, programText(markerDir, label, injectedFile), { mode: 0o755 });
      return file;
    },
    markers() {
      return readdirSync(markerDir)
        .map((name) => /^(.+)\.(\d+)$/.exec(name))
        .filter((match): match is RegExpExecArray => match !== null)
        .map((match) => ({
          label: match[1]!,
          uid: Number(match[2]),
          text: readFileSync(path.join(markerDir, match[0]), 'utf8'),
        }));
    },
  };
}

export function hostileKit(
  t: Test,
  target: Target,
  made: Programs & { readonly base: string } = hostilePrograms(t),
): Kit {
  const uid = Number(execFileSync('id', ['-u', target.user], { encoding: 'utf8' }).trim());
  const { base, program } = made;
  const squatters: number[] = [];
  t.teardown(() => {
    for (const pid of squatters) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
  const chownH = (at: string) => execFileSync('chown', ['-h', `${target.user}:${target.user}`, at]);
  const replace = (at: string) => {
    rmSync(at, { recursive: true, force: true });
    mkdirSync(path.dirname(at), { recursive: true });
  };
  const gitAsUser = (...args: string[]) =>
    asUser(['git', '-c', 'core.hooksPath=/dev/null', '-C', target.clone, ...args]);
  const asUser = (argv: readonly string[], cwd = '/') => {
    const result = spawnSync(
      'setsid',
      [
        'setpriv',
        `--reuid=${target.user}`,
        `--regid=${target.user}`,
        '--init-groups',
        '--',
        '/usr/bin/env',
        '-i',
        `HOME=${target.home}`,
        'PATH=/usr/local/bin:/usr/bin:/bin',
        ...argv,
      ],
      { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 },
    );
    return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
  };
  const kit: Kit = {
    ...made,
    target,
    uid,
    link(at, to) {
      replace(at);
      symlinkSync(to, at);
      chownH(at);
    },
    fifo(at) {
      replace(at);
      execFileSync('mkfifo', ['-m', '0666', at]);
      chownH(at);
    },
    oversized(at, bytes = 64 * 1024 * 1024) {
      replace(at);
      writeFileSync(at, '');
      execFileSync('truncate', ['-s', String(bytes), at]);
      chownH(at);
    },
    hostileGitConfig(options = {}) {
      const hooks = path.join(target.clone, '.git', 'hooks');
      for (const hook of HOOKS)
        writeFileSync(path.join(hooks, hook), `#!/bin/sh\nexec ${program(`hook-${hook}`)} "$@"\n`, { mode: 0o755 });
      const settings: [string, string][] = [
        ['core.fsmonitor', program('fsmonitor')],
        ['core.hooksPath', hooks],
        ['core.sshCommand', program('sshcommand')],
        ['core.pager', program('pager')],
        ['core.editor', program('editor')],
        ['core.askPass', program('askpass')],
        ['sequence.editor', program('sequence-editor')],
        ['credential.helper', `!${program('credential-helper')}`],
        ['protocol.ext.allow', 'always'],
        ['remote.evil.url', `ext::${program('ext-remote')} %S`],
        ['diff.external', program('diff-external')],
        ...(options.filters
          ? ([
              ['filter.hostile.clean', program('filter-clean')],
              ['filter.hostile.smudge', program('filter-smudge')],
              ['filter.hostile.process', program('filter-process')],
            ] as [string, string][])
          : []),
        ['gpg.program', program('gpg')],
        ['uploadpack.packObjectsHook', program('pack-objects-hook')],
        ['include.path', path.join(base, 'included.gitconfig')],
      ];
      writeFileSync(
        path.join(base, 'included.gitconfig'),
        `[alias]\n\tstatus = !${program('alias')}\n[core]\n\tfsmonitor = ${program('fsmonitor-included')}\n`,
        { mode: 0o644 },
      );
      for (const [key, value] of settings) {
        const set = gitAsUser('config', '--local', key, value);
        if (set.status !== 0) throw new Error(`git config ${key} as ${target.user}: ${set.stderr}`);
      }
      mkdirSync(path.join(target.clone, '.git', 'info'), { recursive: true });
      writeFileSync(
        path.join(target.clone, '.git', 'info', 'attributes'),
        options.filters ? '* filter=hostile diff=hostile\n' : '* diff=hostile\n',
      );
      execFileSync('chown', ['-R', '-h', `${target.user}:${target.user}`, path.join(target.clone, '.git')]);
    },
    workspaceState(workspace) {
      return workspaceStateDir(repoUserStateDir(target.home), workspace);
    },
    forgedAgentRecord(workspace, pid, taskId = 'TASK-1') {
      const dir = path.join(kit.workspaceState(workspace), 'agents');
      if (lstatSync(dir, { throwIfNoEntry: false })?.isSymbolicLink()) rmSync(dir);
      mkdirSync(dir, { recursive: true });
      const file = path.join(dir, `${taskId}.json`);
      writeFileSync(file, `${JSON.stringify({ pid, startTime: startTimeOf(pid), taskId })}\n`);
      execFileSync('chown', ['-R', '-h', `${target.user}:${target.user}`, repoUserStateDir(target.home)]);
      return file;
    },
    async squatPorts(ports, prefix = []) {
      for (const port of ports) {
        const argv = [
          ...prefix,
          'setpriv',
          `--reuid=${target.user}`,
          `--regid=${target.user}`,
          '--init-groups',
          '--',
          '/usr/bin/perl',
          '-MIO::Socket::INET',
          '-e',
          `my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => ${port}, Listen => 5, ReuseAddr => 1) or die "bind ${port}: $!"; print "listening\\n"; $| = 1; sleep 3600`,
        ];
        const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
        squatters.push(child.pid!);
        // Unref only once it listens: a squatter that fails at once must still be heard exiting.
        await new Promise<void>((resolve, reject) => {
          let err = '';
          child.stderr!.on('data', (chunk) => (err += chunk));
          child.stdout!.once('data', () => {
            child.unref();
            resolve();
          });
          child.once('close', () => reject(new Error(`port squatter on ${port}: ${err}`)));
        });
      }
    },
    asUser,
  };
  return kit;
}

/** Markers written by uid 0: a planted program root ran. */
export function rootMarkers(kit: Programs): Marker[] {
  return kit.markers().filter((marker) => marker.uid === 0);
}

/** Planted programs that reached a terminal (opened /dev/tty and typed). */
export function typedMarkers(kit: Programs): Marker[] {
  return kit.markers().filter((marker) => marker.label.endsWith('-tty') && /typed/.test(marker.text));
}
