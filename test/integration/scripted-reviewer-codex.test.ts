// bin/scripted-agent posing as codex (test/helpers/scripted-review.ts): each
// reviewer verb's verdict in the -o file, the changes it makes, the fixer;
// and codex's implementer events and its --output-schema check.
import t from 'tap';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { codexAdapter } from '../../src/agent/adapters/codex.js';
import { superviseAgent } from '../../src/agent/supervise.js';
import { parseTaskFile } from '../../src/board/parse.js';
import { realClock, realProcess } from '../../src/io/real-ports.js';
import type { Task } from '../../src/types.js';
import {
  TASK_FILE,
  forkRepo,
  invocation,
  limits,
  reviewPrompt,
  reviewerSuite,
  session,
} from '../helpers/scripted-review.js';
import { git, tempDir } from '../helpers/temp.js';

reviewerSuite('codex');

t.test('codex implementer: JSONL events the adapter reads, the last message in -o, one commit', async (t) => {
  const { repo } = forkRepo(t, []);
  const lastMessage = path.join(tempDir(t, 'codex-out-'), 'last.txt');
  const call = invocation(t, 'codex', repo, 'Your task: TASK-3 "Greet" (file x)\n', 'implement');
  const command = codexAdapter.buildCommand(call);
  const withOutput = { ...command, args: [...command.args.slice(0, -1), '-o', lastMessage, '-'] };
  const run = await superviseAgent({ process: realProcess, clock: realClock }, withOutput, limits, () => undefined);
  t.equal(run.exitCode, 0, run.stderrTail);
  t.same(
    run.stdoutLines.map((line) => (JSON.parse(line) as { type: string }).type),
    ['thread.started', 'turn.started', 'item.completed', 'turn.completed'],
  );
  const result = codexAdapter.parseResult(run);
  t.same([result.ok, result.finalMessage, result.turns], [true, 'TASK-3: done', 1]);
  t.equal(readFileSync(lastMessage, 'utf8'), 'TASK-3: done');
  t.equal((parseTaskFile(TASK_FILE, readFileSync(path.join(repo, TASK_FILE), 'utf8')) as Task).status, 'Done');
  t.equal(git(repo, 'rev-list', '--count', 'HEAD'), '2');
});

t.test('codex: a missing --output-schema file fails at once, as codex does', async (t) => {
  const { repo, fork } = forkRepo(t, []);
  const call = invocation(t, 'codex', repo, reviewPrompt({ round: 1, nonce: 'n', candidate: fork, fork }), 'review');
  const missing = { ...call, review: { ...call.review!, schemaFile: path.join(repo, 'nope.json') } };
  const { run, result } = await session('codex', missing);
  t.same([run.exitCode, run.stdoutLines], [1, []]);
  t.match(run.stderrTail, /Failed to read output schema file .*nope\.json/);
  t.equal(result.failure, 'no-output');
});
