// Every benchmark, once, in quick mode (small sizes, one run): each must
// complete and print its figures, and none may report a goal, so no
// benchmark can break unseen between the runs that measure for real.
// Root, because two of them create a repo user or start the root watcher.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { REPO_ROOT } from '../helpers/source-imports.js';

interface Outcome {
  readonly name: string;
  readonly result?: { readonly figures: readonly unknown[]; readonly goals: readonly unknown[] };
  readonly exitCode?: number | null;
  readonly output?: string;
  readonly error?: string;
}

const benchDir = path.join(REPO_ROOT, 'dist', 'bench');
const benchmarks = readdirSync(benchDir)
  .filter((name) => name.endsWith('.js') && name !== 'run.js')
  .map((name) => name.replace(/\.js$/, ''))
  .sort();

if (systemTestMayRun(t, ['git', 'setpriv', 'useradd'])) {
  const run = spawnSync(process.execPath, [path.join(benchDir, 'run.js'), '--quick', '--json'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/root', LANG: 'C.UTF-8' },
    timeout: 15 * 60_000,
  });
  const lines = run.stdout.trimEnd().split('\n');
  const report = JSON.parse(lines.at(-1) ?? 'null') as { benchmarks: readonly Outcome[] } | null;
  const text = `${lines.slice(0, -1).join('\n')}\n${run.stderr}`;
  t.equal(lines.length, 1, 'with --json, stdout holds the report alone');

  t.equal(run.status, 0, `bench/run.js --quick exits 0 (stderr: ${run.stderr.slice(-2000)})`);
  t.ok(benchmarks.length >= 7, `found the benchmarks (${benchmarks.join(', ')})`);
  t.same(report?.benchmarks.map((outcome) => outcome.name).sort(), benchmarks, 'every benchmark ran');
  for (const outcome of report?.benchmarks ?? []) {
    t.test(outcome.name, async (t) => {
      t.equal(outcome.error, undefined, 'did not break');
      if (outcome.result) {
        t.ok(outcome.result.figures.length > 0, `printed figures (${outcome.result.figures.length})`);
        t.same(outcome.result.goals, [], 'reports no goal');
      } else {
        t.equal(outcome.exitCode, 0, 'the script exited 0');
        const printed = (outcome.output ?? '').split('\n').filter((line) => /\d/.test(line));
        t.ok(printed.length >= 2, `printed its figures (${printed.length} lines with numbers)`);
      }
    });
  }
  t.notMatch(text, /\bgoal\b|NOT met|\bmet\b/i, 'no goal is printed anywhere');
  t.match(text, /none: a quick run/, 'the summary says why no goal is reported');
}
