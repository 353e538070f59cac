// The small typed set of errors the CLI turns into exit codes. Everything else
// that escapes is an internal error (exit 1 with its stack on stderr).

export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  busy: 75,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit table as `agent-runner help exit-codes` prints it. */
export const EXIT_MEANINGS: readonly { readonly code: number; readonly meaning: string }[] = [
  { code: 0, meaning: 'ok (also when the reader of stdout went away first, as in `| head -1`)' },
  {
    code: 1,
    meaning:
      'failed: the work ran and did not succeed (a refused promote, a failed drain, no such task, a question answered no)',
  },
  { code: 2, meaning: 'usage or config: a bad flag, target or config file, or no terminal to ask on; nothing written' },
  { code: 75, meaning: 'busy: the workspace or repo lock is held (try again, or --wait where offered)' },
  { code: 130, meaning: 'interrupted: a second Ctrl-C (SIGINT) before the command stopped' },
  { code: 143, meaning: 'terminated: a second SIGTERM before the command stopped' },
];

/** A second SIGTERM or SIGINT ends the process at once, with the shell's 128 + signal number. */
export const SIGNAL_EXIT = { SIGTERM: 128 + 15, SIGINT: 128 + 2 } as const;

/** An error meant for the operator: one clear message and an exit code. */
export class ExitError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
    this.name = 'ExitError';
  }
}

/** Bad flags, a bad workspace, an invalid config: exit 2, nothing written. */
export class UsageError extends ExitError {
  constructor(message: string) {
    super(message, EXIT.usage);
    this.name = 'UsageError';
  }
}

/** The work ran and did not succeed (a refused promote, a failed run): exit 1. */
export class FailedError extends ExitError {
  constructor(message: string) {
    super(message, EXIT.failed);
    this.name = 'FailedError';
  }
}

/** Someone else holds the repo's lock: exit 75 (EX_TEMPFAIL). */
export class BusyError extends ExitError {
  constructor(message: string) {
    super(message, EXIT.busy);
    this.name = 'BusyError';
  }
}

/**
 * A user-facing configuration error: which file, which key, what is wrong and
 * how to fix it, in one line.
 */
export function configValueError(file: string, key: string, problem: string, fix: string): string {
  return `${file}: ${key}: ${problem}; ${fix}`;
}

/** Every problem of a config file, one line each. */
export function formatProblems(
  problems: readonly { file: string; key: string; problem: string; fix: string }[],
): string {
  return problems.map((p) => configValueError(p.file, p.key, p.problem, p.fix)).join('\n');
}

/** A path in a tree a repo user can write that root refuses to read: a link, not a regular file, too large. */
export class UntrustedPathError extends FailedError {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(
      `${path} ${problem}; agent-runner reads a repo user's files without following links. Remove or replace it (as that user)`,
    );
    this.name = 'UntrustedPathError';
  }
}

/** A path given to agent-runner (a workspace, a registry, a config) that it cannot use as it is: exit 2. */
export class PathError extends UsageError {
  constructor(
    readonly path: string,
    readonly problem: string,
    fix: string,
  ) {
    super(`${path}: ${problem}; ${fix}`);
    this.name = 'PathError';
  }
}

/**
 * A file agent-runner was asked to read that it cannot read: a directory, a
 * device or FIFO (a link to /dev/zero), larger than any file the runner
 * reads, a link loop, no permission.
 */
export class UnreadableFileError extends PathError {
  constructor(path: string, problem: string) {
    super(path, problem, 'it must be a readable regular file');
    this.name = 'UnreadableFileError';
  }
}
