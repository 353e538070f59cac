// The commands that throw work away (discard, gc) ask first. On a terminal
// they list what goes and wait for y; `--yes` skips the question, `--dry-run`
// prints the list and changes nothing; with no terminal and neither flag they
// refuse (exit 2) rather than guess. As root on a registered repo the list is
// read by the repo user's own process (`--dry-run --json`), and the answer is
// passed on to it as `--yes`.
import type { CliContext } from './context.js';
import { EXIT, UsageError } from '../errors.js';
import { routeLifecycle, type WorkspaceChoice } from './lifecycle-route.js';

export interface ConsentOptions {
  readonly yes?: boolean;
  readonly dryRun?: boolean;
}

/** act: go ahead; plan: print what would go and stop; ask: show it on the terminal and wait for y. */
export type ConsentStep = 'act' | 'plan' | 'ask';

/** Pure: what the flags and the terminal allow. */
export function consentStep(command: string, options: ConsentOptions, canAsk: boolean): ConsentStep {
  if (options.yes && options.dryRun)
    throw new UsageError(`${command}: --yes and --dry-run exclude each other; --dry-run changes nothing`);
  if (options.dryRun) return 'plan';
  if (options.yes) return 'act';
  if (!canAsk)
    throw new UsageError(
      `${command} asks before it removes anything, and stdin is not a terminal; pass --yes to ${command} without asking, or --dry-run to print what it would remove`,
    );
  return 'ask';
}

/** The flag that carries the decision to the repo user's process. */
export function consentFlag(step: ConsentStep): string {
  return step === 'plan' ? '--dry-run' : '--yes';
}

/** Pure: y or yes (any case) is a yes; anything else, and no answer at all, is a no. */
export function isYes(answer: string | undefined): boolean {
  return answer !== undefined && /^(y|yes)$/i.test(answer.trim());
}

/** Shows the lines on stderr and asks the question; true on a yes. Says "nothing changed" on anything else. */
export async function askToGoOn(
  context: CliContext,
  command: string,
  lines: readonly string[],
  question: string,
): Promise<boolean> {
  context.err(`${lines.join('\n')}\n`);
  const answer = await context.ask?.(question);
  if (isYes(answer)) return true;
  context.err(`${command}: nothing changed\n`);
  return false;
}

/**
 * The plan of a command, read where the command itself would run: as the repo user (its `--dry-run --json`) or
 * here (`local`, given the workspace). A number is the exit code of a user's process that could not make one.
 */
export async function planWhereItRuns<T>(
  context: CliContext,
  choice: WorkspaceChoice,
  forward: readonly [string, ...string[]],
  local: (workspace: string | undefined) => Promise<T>,
): Promise<T | number> {
  let printed = '';
  const capture: CliContext = { ...context, out: (text) => void (printed += text) };
  const route = await routeLifecycle(capture, choice, [...forward, '--dry-run', '--json']);
  if (route.kind === 'in-place') return local(route.workspace);
  if (route.exitCode !== EXIT.ok) return route.exitCode;
  try {
    return JSON.parse(printed) as T;
  } catch {
    throw new UsageError(`${forward[0]} --dry-run --json as the repo's user printed no plan; run it with --yes`);
  }
}
