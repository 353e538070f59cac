// agent-runner logs --repo NAME|--workspace DIR [TASK] [-f] [--raw|--json] [--lines N] [--since WHEN]:
// the newest transcript of TASK (of any task without one), its last lines,
// as a readable transcript (control/transcripts/render.ts: claude's and
// codex's streams as sessions, messages, tool calls and costs; control
// characters stripped; secrets were redacted when it was written and
// capability tokens are again), or the JSONL as written with --raw (--json
// is the same). -f follows either until Ctrl-C.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT, PathError, UsageError } from '../errors.js';
import { isSafeTaskId } from '../board/parse.js';
import { findTranscript, followTranscript, readTranscriptLines } from '../control/transcripts/follow.js';
import { TranscriptRenderer } from '../control/transcripts/render.js';
import { parsePositiveInt } from './options.js';
import { missingTranscriptError, recordsTarget } from './records-target.js';
import { resolveTarget, targetOptions } from './target.js';
import { parseSince, transcriptLinesSince } from './since.js';
import { withExamples } from './help.js';

const POLL_MS = 250;
const DEFAULT_LINES = 40;

interface LogsOptions {
  workspace?: string;
  repo?: string;
  since?: string;
  follow?: boolean;
  json?: boolean;
  raw?: boolean;
  lines: string;
}

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  withExamples(command, [
    ['agent-runner logs --repo web TASK-3 -f', "as root: follow TASK-3's transcript"],
    ['agent-runner logs --workspace . --since 2h', 'your own checkout: the newest transcript, the last two hours'],
  ])
    .argument('[repo-or-task]', 'the task (with --repo or --workspace); without them, the repo name (as --repo)')
    .argument('[task]', 'the task, e.g. TASK-3 (default: the newest transcript of any task)')
    .option('--repo <name>', 'a repo from the registry (as root)')
    .option('--workspace <dir>', 'a checkout: its transcripts, in your own state dir')
    .option('--since <when>', 'only events from then on: 90m, 2h, 3d, yesterday, 2026-12-01, 2026-12-01T10:00 (UTC)')
    .option('-f, --follow', 'keep printing new lines until Ctrl-C')
    .option('-n, --lines <n>', 'how many of the last lines to print first', String(DEFAULT_LINES))
    .option('--raw', 'print the transcript as written: JSON, one event a line')
    .option('--json', 'the same as --raw')
    .action(async (first: string | undefined, second: string | undefined, options: LogsOptions) => {
      const named = options.repo !== undefined || options.workspace !== undefined;
      const task = named ? (first ?? second) : second;
      if (named && second !== undefined) throw new UsageError('logs: with --repo or --workspace give only the task');
      const choice = targetOptions(
        resolveTarget(
          'logs',
          { ...options, positional: named ? undefined : first },
          { workspace: true, required: true },
        ),
      );
      const since =
        options.since === undefined ? undefined : parseSince('--since', options.since, context.ports.clock.now());
      if (task !== undefined && !isSafeTaskId(task)) throw new UsageError(`"${task}" is not a task id (e.g. TASK-3)`);
      const count = parsePositiveInt('--lines', options.lines, 1_000_000);
      const target = await recordsTarget(context, 'logs', choice.repo, choice.workspace);
      if (!target.records)
        throw new UsageError(`logs: cannot find the records of ${target.label}: ${target.recordsError}`);
      const { fs, clock } = context.ports;
      const records = target.records;
      const entry = await findTranscript(fs, records, task, target.label).catch(async (error: Error) => {
        // Not found is exit 1, and "no such task" when the board does not have it; a bad path stays a usage error.
        if (!(error instanceof UsageError) || error instanceof PathError) throw error;
        throw await missingTranscriptError(context, target, task, error);
      });
      const raw = options.raw === true || options.json === true;
      // One renderer for the tail and what follows it, so a tool's result still names its call.
      const renderer = new TranscriptRenderer();
      const shown = (lines: readonly string[]) => (raw ? lines : renderer.lines(lines).map((line) => line.text));
      const print = (lines: readonly string[]) => {
        if (lines.length) context.out(`${lines.join('\n')}\n`);
      };
      const lines = await readTranscriptLines(fs, records, entry);
      context.err(`logs: ${entry.name}\n`);
      // -n counts what is printed: raw lines with --raw, display lines otherwise.
      print(shown(since === undefined ? lines : transcriptLinesSince(lines, since)).slice(-count));
      if (options.follow)
        await followTranscript(fs, clock, records, entry, {
          pollMs: POLL_MS,
          onLines: (more) => print(shown(more)),
          signal: context.terminate,
          skip: lines.length,
        });
      setExit(EXIT.ok);
    });
}
