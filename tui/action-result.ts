// How an action ended, in one footer line, from the command's exit code and
// output (the --json result where the command has one). Pure.
import { printableLine } from '../src/printable.js';
import type { Tone } from './view-model.js';
import type { ActionOutcome } from './services.js';

function lastLine(text: string): string {
  return text.trim().split('\n').filter(Boolean).at(-1) ?? '';
}

function json(text: string): Record<string, unknown> | undefined {
  const last = text.trim();
  if (!last.startsWith('{')) return undefined;
  try {
    return JSON.parse(last) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

export function describeActionResult(label: string, outcome: ActionOutcome): { text: string; tone: Tone } {
  const say = (text: string, tone: Tone) => ({ text: printableLine(`${label}: ${text}`).trim(), tone });
  if (outcome.exitCode === 75)
    return say(`busy: ${lastLine(outcome.stderr).replace(/^agent-runner: /, '') || 'the repo is locked'}`, 'warn');
  const result = json(outcome.stdout);
  if (outcome.exitCode !== 0 && !(result && typeof result.outcome === 'string')) {
    return say(
      `failed (exit ${outcome.exitCode ?? 'signal'}): ${lastLine(outcome.stderr).replace(/^agent-runner: /, '') || lastLine(outcome.stdout) || 'no output'}`,
      'bad',
    );
  }
  if (result) {
    if (typeof result.outcome === 'string') {
      // A run record (dispatch --json).
      const tasks = Array.isArray(result.tasks) ? (result.tasks as { outcome?: string }[]) : [];
      const n = (what: string) => tasks.filter((task) => task.outcome === what).length;
      const tone: Tone = result.outcome === 'drained' ? 'ok' : result.outcome === 'nothing-to-do' ? 'muted' : 'bad';
      return say(
        `${result.outcome}, ${n('landed')} landed, ${n('parked')} parked, ${n('blocked')} blocked, ${n('failed')} failed (exit ${outcome.exitCode})${typeof result.detail === 'string' ? `: ${result.detail}` : ''}`,
        tone,
      );
    }
    if (typeof result.detail === 'string')
      return say(`${result.detail}${result.pushed === true ? ' (pushed)' : ''}`, 'ok');
    if (typeof result.discarded === 'boolean')
      return say(
        `${result.discarded ? 'auto/work reset' : 'auto/work was already'} at ${String(result.to).slice(0, 10)}; removed ${(result.removedBranches as unknown[] | undefined)?.length ?? 0} task branch(es)`,
        'ok',
      );
    if (typeof result.paused === 'boolean')
      return say(result.paused ? 'paused' : 'resumed', result.paused ? 'warn' : 'ok');
  }
  const said = lastLine(outcome.stderr).replace(/^[a-z-]+: /, '') || lastLine(outcome.stdout);
  return say(said || 'done', 'ok');
}
