// The drain's books on agent sessions: each session's report for the ledger,
// spend against the budgets root passed in (SpendPolicy: the ledger's totals
// when the run started, plus what this drain spends), and the rate-limit
// gate: after a rate limit no new session of the assistant starts before
// the reset, the limited task is run again without being charged an attempt,
// and after MAX_RATE_LIMIT_WAITS waits it is blocked. A session whose result
// is usable (the task is Done or Blocked) is kept whatever its stream said.
// Each session is given what is left of task_usd (budgetLeft), and one that
// was stopped at it, or that the provider broker refused over budget, is
// parked "over its budget", not charged an attempt.
import type { Clock } from '../ports.js';
import type { Task, TaskId, RunOutcome } from '../types.js';
import type { SessionEnd, SessionFollowUp } from '../agent/run-task.js';
import type { Emit, SessionReport } from './types.js';
import {
  dailyBudgetVerdict,
  isDailyBudgetReason,
  rateLimitVerdict,
  refusedByBroker,
  reportTokens,
  stoppedAtBudget,
  taskBudgetLeft,
  taskBudgetVerdict,
  utcDay,
  type Spent,
} from '../spend/verdict.js';
import type { SpendPolicy } from '../spend/policy.js';

/** Pure: a session's result as a ledger report; what the CLI did not say stays null. */
export function sessionReport(
  taskId: TaskId,
  assistant: string,
  session: Omit<SessionEnd, 'role' | 'iteration' | 'judged'> & { readonly role: SessionReport['role'] },
): SessionReport {
  const { result } = session;
  return {
    taskId,
    assistant,
    role: session.role,
    model: result.model ?? session.model ?? null,
    effort: session.effort ?? null,
    startedAt: new Date(session.startedAt).toISOString(),
    endedAt: new Date(session.endedAt).toISOString(),
    wallMs: Math.max(0, session.endedAt - session.startedAt),
    inputTokens: result.usage?.input ?? null,
    outputTokens: result.usage?.output ?? null,
    cacheReadTokens: result.usage?.cacheRead ?? null,
    cacheWriteTokens: result.usage?.cacheWrite ?? null,
    costUsd: result.costUsd ?? null,
    outcome: result.ok ? 'ok' : (result.failure ?? 'failed'),
    rateLimited: result.failure === 'rate-limited' || result.rateLimitSeen !== undefined,
  };
}

export class SessionGuard {
  readonly reports: SessionReport[] = [];
  private day: string;
  private spentToday: Spent;
  private readonly taskUsd = new Map<TaskId, number>();
  private readonly waits = new Map<TaskId, number>();
  private gateUntil = 0;
  private budgetReason: string | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly policy: SpendPolicy,
    private readonly assistant: string,
    private readonly emit: Emit,
    private readonly stop: AbortSignal,
    /** Told each new reset, so the next drain waits for it too. */
    private readonly onGateClosed: (until: number) => void = () => undefined,
  ) {
    this.day = policy.day;
    this.spentToday = policy.spentToday;
    for (const [task, spent] of Object.entries(policy.taskSpentUsd)) this.taskUsd.set(task.toUpperCase(), spent);
    this.rollDay();
    this.checkDaily();
  }

  /**
   * A reset an earlier drain waited for: the gate starts closed until then,
   * never longer than the longest wait from now (the file is the user's).
   */
  carryOver(
    gate: { readonly assistant: string; readonly until: number } | undefined,
    taskId = '(earlier drain)',
  ): void {
    if (!gate || gate.assistant !== this.assistant) return;
    const now = this.clock.now();
    const until = Math.min(gate.until, now + this.policy.limits.rateLimitWaitMaxSec * 1000);
    if (until <= now) return;
    this.gateUntil = until;
    this.emit({
      event: 'rate-limit-wait',
      assistant: this.assistant,
      until: new Date(until).toISOString(),
      taskId,
      detail: 'an earlier drain was rate limited until then',
    });
  }

  /** Set once the repo is over a daily budget: the drain starts no new task. */
  get budgetStop(): string | undefined {
    this.rollDay();
    return this.budgetReason;
  }

  /** Waits out a closed rate-limit gate; a task already over its budget does not start. */
  async beforeSession(task: Pick<Task, 'id'>): Promise<RunOutcome | undefined> {
    while (this.clock.now() < this.gateUntil) {
      if (this.stop.aborted) break;
      await this.sleep(this.gateUntil - this.clock.now());
    }
    if (this.stop.aborted) return { kind: 'unfinished', reason: 'the drain was stopped before the session started' };
    const over = taskBudgetVerdict(this.policy.limits.taskUsd, this.taskSpent(task.id));
    return over.over ? { kind: 'over-budget', reason: over.reason } : undefined;
  }

  /** USD the task's next session may spend (task_usd minus its spend so far); undefined: no task_usd. */
  budgetLeft(task: Pick<Task, 'id'>): number | undefined {
    return taskBudgetLeft(this.policy.limits.taskUsd, this.taskSpent(task.id));
  }

  afterSession(task: Pick<Task, 'id'>, session: SessionEnd): SessionFollowUp {
    const report = sessionReport(task.id, this.assistant, session);
    this.record(task.id, report);
    const { result, judged } = session;
    const usable = judged?.kind === 'done' || judged?.kind === 'blocked';
    const now = this.clock.now();
    const limited = !usable && !result.ok && result.failure === 'rate-limited';
    if (limited || result.rateLimitSeen) {
      const waits = limited ? (this.waits.get(task.id) ?? 0) : 0;
      const verdict = rateLimitVerdict({
        now,
        resetAt: result.resetAt ?? result.rateLimitSeen?.resetAt,
        waits,
        minSec: this.policy.limits.rateLimitWaitMinSec,
        maxSec: this.policy.limits.rateLimitWaitMaxSec,
      });
      if (verdict.kind === 'block') return { kind: 'end', outcome: { kind: 'blocked', reason: verdict.reason } };
      if (verdict.until > this.gateUntil) {
        this.gateUntil = verdict.until;
        this.onGateClosed(verdict.until);
        this.emit({
          event: 'rate-limit-wait',
          assistant: this.assistant,
          until: new Date(verdict.until).toISOString(),
          taskId: task.id,
          detail: verdict.why,
        });
      }
      if (limited) {
        this.waits.set(task.id, waits + 1);
        return { kind: 'again', reason: `rate limited (wait ${waits + 1}); not charged` };
      }
    }
    if (!usable && result.brokerOverBudget !== undefined && isDailyBudgetReason(result.brokerOverBudget)) {
      // The repo's day is spent, not the task's budget: no new task starts, and this one waits uncharged.
      this.stopForTheDay(result.brokerOverBudget);
      const { reason } = refusedByBroker(result.brokerOverBudget);
      return { kind: 'end', outcome: { kind: 'over-budget', reason, daily: true } };
    }
    if (!usable) {
      // Stopped at its budget (the broker's refusal, claude's flag or the runner's stream check): parked, not an
      // ordinary failure.
      const over =
        result.brokerOverBudget !== undefined
          ? refusedByBroker(result.brokerOverBudget)
          : result.failure === 'over-budget'
            ? stoppedAtBudget(this.policy.limits.taskUsd, this.taskSpent(task.id))
            : taskBudgetVerdict(this.policy.limits.taskUsd, this.taskSpent(task.id));
      if (over.over) return { kind: 'end', outcome: { kind: 'over-budget', reason: over.reason } };
    }
    return { kind: 'go-on' };
  }

  /**
   * A reviewer's session, in the books like any (its own assistant, role review): what it cost counts toward the
   * task's budget. Its rate limit is the review stage's to judge (systemic, no attempt charged), not this gate's,
   * which is the implementing assistant's. The reason when the task is now over its budget.
   */
  afterReviewSession(
    task: Pick<Task, 'id'>,
    assistant: string,
    session: Parameters<typeof sessionReport>[2],
  ): string | undefined {
    this.record(task.id, sessionReport(task.id, assistant, session));
    const over = taskBudgetVerdict(this.policy.limits.taskUsd, this.taskSpent(task.id));
    return over.over ? over.reason : undefined;
  }

  /** The reason a task may not start another session (a review's): over its budget, or the drain stopping. */
  mayNotStart(task: Pick<Task, 'id'>): string | undefined {
    if (this.stop.aborted) return 'the drain was stopped';
    const over = taskBudgetVerdict(this.policy.limits.taskUsd, this.taskSpent(task.id));
    return over.over ? over.reason : undefined;
  }

  private taskSpent(taskId: TaskId): number {
    return this.taskUsd.get(taskId.toUpperCase()) ?? 0;
  }

  private record(taskId: TaskId, report: SessionReport): void {
    this.reports.push(report);
    this.rollDay();
    if (report.costUsd !== null)
      this.taskUsd.set(taskId.toUpperCase(), (this.taskUsd.get(taskId.toUpperCase()) ?? 0) + report.costUsd);
    this.spentToday = {
      usd: this.spentToday.usd + (report.costUsd ?? 0),
      tokens: this.spentToday.tokens + reportTokens(report),
    };
    this.checkDaily();
  }

  /** A new UTC day starts from nothing spent, and lifts a daily stop. */
  private rollDay(): void {
    const today = utcDay(this.clock.now());
    if (today === this.day) return;
    this.day = today;
    this.spentToday = { usd: 0, tokens: 0 };
    this.budgetReason = undefined;
  }

  private checkDaily(): void {
    const verdict = dailyBudgetVerdict(this.policy.limits, this.spentToday);
    if (verdict.over) this.stopForTheDay(verdict.reason);
  }

  private stopForTheDay(reason: string): void {
    if (this.budgetReason) return;
    this.budgetReason = reason;
    this.emit({ event: 'budget-reached', detail: reason });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        timer.cancel();
        this.stop.removeEventListener('abort', done);
        resolve();
      };
      const timer = this.clock.setTimer(Math.max(1, ms), done);
      this.stop.addEventListener('abort', done, { once: true });
    });
  }
}
