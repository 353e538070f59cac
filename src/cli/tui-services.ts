// The dashboard's services (tui/services.ts), wired from what the commands
// themselves run, so the dashboard has no second implementation of
// anything: actions start `agent-runner ARGS` (this install's node and
// main.js, the caller's environment) exactly as an operator would type them;
// the runs tab calls the function `runs` prints; the log tab and a task's
// detail call the readers `logs` uses; staging is `status --json`'s answer.
import type { CliContext } from './context.js';
import type { ConsoleServices, StartedAction } from '../../tui/services.js';
import type { StagingFacts, TranscriptTail } from '../../tui/repo-view.js';
import type { Install } from '../control/repo-user/run-as.js';
import { readRunHistory } from './runs.js';
import { recordsTarget } from './records-target.js';
import { listTranscripts, readTaskAttempts, readTaskReview } from '../control/repo-view/workspace-files.js';
import { followTranscript, readTranscriptLines } from '../control/transcripts/follow.js';
import { pickTranscript } from '../control/transcripts/view.js';
import { TranscriptRenderer, type DisplayLine } from '../control/transcripts/render.js';
import { UsageError } from '../errors.js';

const HISTORY_RUNS = 30;
/** The log tab keeps this many lines; older ones scroll away. */
const LOG_LINES = 1000;
const TASK_LINES = 15;
const POLL_MS = 500;

function stringEnv(env: CliContext['env']): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

export function consoleServices(context: CliContext, install: Install): ConsoleServices {
  const { fs, clock, process } = context.ports;

  const start = (args: readonly string[]): StartedAction => {
    let stdout = '';
    let stderr = '';
    const child = process.start(
      { program: install.node, args: [install.main, ...args], env: stringEnv(context.env), cwd: context.cwd },
      { onStdoutLine: (line) => void (stdout += `${line}\n`), onStderrLine: (line) => void (stderr += `${line}\n`) },
    );
    return {
      done: child.exited.then((ended) => ({ exitCode: ended.exitCode, stdout, stderr })),
      stop: () => child.signalGroup('SIGTERM'),
    };
  };

  const records = async (repo: string) => {
    const target = await recordsTarget(context, 'logs', repo, undefined);
    if (!target.records) throw new UsageError(target.recordsError ?? `cannot find the records of ${repo}`);
    return target.records;
  };

  return {
    start,
    async runHistory(repo) {
      return readRunHistory(context, repo, undefined, HISTORY_RUNS);
    },
    async staging(repo, fetch): Promise<StagingFacts> {
      const outcome = await start(['status', '--repo', repo, '--json', ...(fetch ? [] : ['--no-fetch'])]).done;
      if (outcome.exitCode !== 0)
        throw new Error(
          outcome.stderr
            .trim()
            .split('\n')
            .at(-1)
            ?.replace(/^agent-runner: /, '') || `status exited ${outcome.exitCode}`,
        );
      return JSON.parse(outcome.stdout) as StagingFacts;
    },
    async follow(repo, task, onTail, signal) {
      const where = await records(repo);
      let entry = pickTranscript(await listTranscripts(fs, where), task);
      while (!entry && !signal.aborted) {
        onTail({ name: undefined, lines: [] });
        await clock.sleep(POLL_MS);
        entry = pickTranscript(await listTranscripts(fs, where), task);
      }
      if (!entry || signal.aborted) return;
      let lines: DisplayLine[] = [];
      const name = entry.name;
      // One renderer for the whole follow, fed as the file grows: the log tab reads as `logs -f` prints.
      const renderer = new TranscriptRenderer();
      await followTranscript(fs, clock, where, entry, {
        pollMs: POLL_MS,
        skip: 0,
        signal,
        onLines: (raw) => {
          lines = [...lines, ...renderer.lines(raw)].slice(-LOG_LINES);
          onTail({ name, lines } satisfies TranscriptTail);
        },
      });
    },
    async taskDetail(repo, taskId) {
      const where = await records(repo);
      const attempts = await readTaskAttempts(fs, where, taskId);
      const review = await readTaskReview(fs, where, taskId);
      const entry = pickTranscript(await listTranscripts(fs, where), taskId);
      const transcript: TranscriptTail = entry
        ? {
            name: entry.name,
            lines: new TranscriptRenderer().lines(await readTranscriptLines(fs, where, entry)).slice(-TASK_LINES),
          }
        : { name: undefined, lines: [] };
      return { attempts, transcript, ...(review ? { review } : {}) };
    },
  };
}
