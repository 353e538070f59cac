// agent-runner logs REPO|--workspace DIR [TASK] [-f] [--raw|--json] [--lines N]:
// the newest transcript of TASK (of any task without one), its last lines,
// as a readable transcript (control/transcripts/render.ts: claude's and
// codex's streams as sessions, messages, tool calls and costs; control
// characters stripped; secrets were redacted when it was written and
// capability tokens are again), or the JSONL as written with --raw (--json
// is the same). -f follows either until Ctrl-C.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT, UsageError } from '../errors.js';
import { isSafeTaskId } from '../board/parse.js';
import { findTranscript, followTranscript, readTranscriptLines } from '../control/transcripts/follow.js';
import { TranscriptRenderer } from '../control/transcripts/render.js';
import { parsePositiveInt } from './options.js';
import { recordsTarget } from './records-target.js';

const POLL_MS = 250;
const DEFAULT_LINES = 40;

interface LogsOptions {
  workspace?: string;
  follow?: boolean;
  json?: boolean;
  raw?: boolean;
  lines: string;
}

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .argument('[repo-or-task]', 'a repo name from the registry (as root); with --workspace, the task')
    .argument('[task]', 'the task, e.g. TASK-3 (default: the newest transcript of any task)')
    .option('--workspace <dir>', 'a checkout: its transcripts, in your own state dir')
    .option('-f, --follow', 'keep printing new lines until Ctrl-C')
    .option('-n, --lines <n>', 'how many of the last lines to print first', String(DEFAULT_LINES))
    .option('--raw', 'print the transcript as written: JSON, one event a line')
    .option('--json', 'the same as --raw')
    .action(async (first: string | undefined, second: string | undefined, options: LogsOptions) => {
      const repoName = options.workspace === undefined ? first : undefined;
      const task = options.workspace === undefined ? second : (first ?? second);
      if (options.workspace !== undefined && second !== undefined)
        throw new UsageError('with --workspace give only the task');
      if (task !== undefined && !isSafeTaskId(task)) throw new UsageError(`"${task}" is not a task id (e.g. TASK-3)`);
      const count = parsePositiveInt('--lines', options.lines, 1_000_000);
      const target = await recordsTarget(context, 'logs', repoName, options.workspace);
      if (!target.records)
        throw new UsageError(`logs: cannot find the records of ${target.label}: ${target.recordsError}`);
      const { fs, clock } = context.ports;
      const entry = await findTranscript(fs, target.records, task, target.label);
      const raw = options.raw === true || options.json === true;
      // One renderer for the tail and what follows it, so a tool's result still names its call.
      const renderer = new TranscriptRenderer();
      const shown = (lines: readonly string[]) => (raw ? lines : renderer.lines(lines).map((line) => line.text));
      const print = (lines: readonly string[]) => {
        if (lines.length) context.out(`${lines.join('\n')}\n`);
      };
      const lines = await readTranscriptLines(fs, target.records, entry);
      context.err(`logs: ${entry.name}\n`);
      // -n counts what is printed: raw lines with --raw, display lines otherwise.
      print(shown(lines).slice(-count));
      if (options.follow)
        await followTranscript(fs, clock, target.records, entry, {
          pollMs: POLL_MS,
          onLines: (more) => print(shown(more)),
          signal: context.terminate,
          skip: lines.length,
        });
      setExit(EXIT.ok);
    });
}
