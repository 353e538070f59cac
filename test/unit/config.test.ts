// .agent/config.json: schema, every problem at once, precedence and caps.
import t from 'tap';
import { escalationProblems } from '../../src/repo/escalation.js';
import {
  applyOverrides,
  DEFAULT_CONFIG,
  MAX_PARALLEL_CEILING,
  resolveModelChoice,
  validateConfig,
} from '../../src/repo/config.js';
import { parseRegistry } from '../../src/control/registry/parse.js';
import { cronScheduler } from '../../src/io/cron.js';
import { formatProblems } from '../../src/errors.js';
import { aTask } from '../helpers/board-builder.js';
import { EFFORTS, effortProblem } from '../../src/repo/efforts.js';
import type { AssistantName } from '../../src/types.js';

t.test('an empty object is the defaults', async (t) => {
  const result = validateConfig({});
  t.same(result.problems, []);
  t.same(result.config, DEFAULT_CONFIG);
  t.equal(result.config.agentIdleTimeoutSec, 480);
  t.equal(result.config.gates, '.agent/gates.sh');
  t.equal(result.config.prompt, '.agent/prompt.md');
  t.equal(result.config.maxAttempts, 2);
});

t.test('every problem is reported at once, with the key and the fix', async (t) => {
  const result = validateConfig(
    {
      assistant: 'gpt',
      maxParallel: 0,
      gates: '../../etc/passwd',
      setup: 5,
      command: [],
      unknownKey: 1,
      effort: 'extreme',
    },
    'repo/.agent/config.json',
  );
  t.same(result.problems.map((p) => p.key).sort(), [
    'assistant',
    'command',
    'effort',
    'gates',
    'maxParallel',
    'setup',
    'unknownKey',
  ]);
  t.equal(
    formatProblems(result.problems.filter((p) => p.key === 'gates')),
    'repo/.agent/config.json: gates: must be a relative path inside the repo; set "gates" to the path of an executable script in the repo, e.g. ".agent/gates.sh"',
  );
});

t.test('the command assistant needs its argv', async (t) => {
  t.same(
    validateConfig({ assistant: 'command' }).problems.map((p) => [p.key, p.problem]),
    [['command', 'is required when "assistant" is "command"']],
  );
  const ok = validateConfig({ assistant: 'command', command: ['./agent.sh', '--fast'] });
  t.same(ok.problems, []);
  t.same(ok.config.command, ['./agent.sh', '--fast']);
  t.same(
    validateConfig({ assistant: 'claude', command: ['x'] }).warnings.map((w) => w.key),
    ['command'],
  );
});

t.test('not an object', async (t) => {
  t.same(
    validateConfig([]).problems.map((p) => p.key),
    ['(root)'],
  );
  t.same(
    validateConfig('x').problems.map((p) => p.key),
    ['(root)'],
  );
});

t.test('precedence: flag over config over default; caps only lower', async (t) => {
  const config = validateConfig({ model: 'config-model', maxParallel: 8 }).config;
  t.equal(applyOverrides(config, {}).model, 'config-model');
  t.equal(applyOverrides(config, { model: 'flag-model' }).model, 'flag-model');
  t.equal(applyOverrides(config, {}, { maxParallel: 3 }).maxParallel, 3, 'the registry cap wins over the repo');
  t.equal(
    applyOverrides(config, { maxParallel: 50 }, { maxParallel: 4 }).maxParallel,
    4,
    'a flag cannot exceed the cap',
  );
  t.equal(
    applyOverrides(validateConfig({ maxParallel: 2 }).config, {}, { maxParallel: 10 }).maxParallel,
    2,
    'the repo may ask for fewer',
  );
});

t.test('a task label sits above flag, config and default for model and effort', async (t) => {
  const config = applyOverrides(validateConfig({ model: 'config-model', effort: 'low' }).config, {
    model: 'flag-model',
  });
  const plain = aTask({ id: 'TASK-1' });
  const labelled = aTask({ id: 'TASK-2', labels: ['model:opus', 'effort:high'] });
  t.same(resolveModelChoice(config, plain), {
    model: 'flag-model',
    effort: 'low',
    modelSource: 'flag-or-config',
    effortSource: 'flag-or-config',
  });
  t.same(resolveModelChoice(config, labelled), {
    model: 'opus',
    effort: 'high',
    modelSource: 'label',
    effortSource: 'label',
  });
  t.same(resolveModelChoice(DEFAULT_CONFIG, plain), {
    model: undefined,
    effort: undefined,
    modelSource: 'default',
    effortSource: 'default',
  });
});

t.test('a label its assistant cannot take is the run-time problem, worded as next words it', async (t) => {
  const choice = resolveModelChoice(DEFAULT_CONFIG, aTask({ id: 'TASK-1', labels: ['model:-x', 'effort:high'] }));
  t.equal(
    choice.problem,
    'label "model:-x" "-x" is not a model id (a letter or digit, then letters, digits and . _ : / @ [ ] - (at most 100 characters)); fix: write the model id as the assistant takes it (model:claude-sonnet-4-5), or remove the label',
  );
  t.equal(resolveModelChoice(DEFAULT_CONFIG, aTask({ id: 'TASK-1', labels: ['effort:high'] })).problem, undefined);
});

t.test('"model" in the config is held to the rule labels and flags are', async (t) => {
  for (const model of ['sonnet', 'claude-sonnet-4-5', 'us.anthropic.claude-3-7-sonnet-20250219-v1:0', 'sonnet[1m]'])
    t.same(validateConfig({ model }).problems, [], `${model} is a model id`);
  for (const model of ['', ' ', '--dangerously-skip-permissions', 'opus 4', 'a;b', 42]) {
    const problems = validateConfig({ model }).problems;
    t.same(
      problems.map((p) => p.key),
      ['model'],
      `${JSON.stringify(model)} is refused`,
    );
  }
  t.match(validateConfig({ model: '-x' }).problems[0], {
    problem:
      '"-x" is not a model id (a letter or digit, then letters, digits and . _ : / @ [ ] - (at most 100 characters))',
    fix: 'set "model" to a model id such as "sonnet", or remove it',
  });
});

t.test('setup is an argv array or a script path, kept as given', async (t) => {
  const cases: { setup: unknown; kept?: readonly string[] | string; problem?: true }[] = [
    { setup: ['npm', 'ci'], kept: ['npm', 'ci'] },
    { setup: '.agent/setup.sh', kept: '.agent/setup.sh' },
    { setup: null, kept: undefined },
    { setup: '/usr/bin/make', problem: true },
    { setup: '../outside.sh', problem: true },
    { setup: [], problem: true },
    { setup: ['npm', ''], problem: true },
  ];
  for (const { setup, kept, problem } of cases) {
    const result = validateConfig({ setup });
    if (problem)
      t.same(
        result.problems.map((p) => p.key),
        ['setup'],
        `${JSON.stringify(setup)} is refused`,
      );
    else t.same([result.problems, result.config.setup], [[], kept], `${JSON.stringify(setup)} is kept as given`);
  }
});

t.test('one parallel cap: the repo config and the registry are bounded by the same number', async (t) => {
  t.equal(MAX_PARALLEL_CEILING, 16);
  t.same(validateConfig({ maxParallel: MAX_PARALLEL_CEILING }).problems, [], 'the repo config may ask for the ceiling');
  t.same(
    validateConfig({ maxParallel: MAX_PARALLEL_CEILING + 1 }).problems.map((p) => p.key),
    ['maxParallel'],
    'but not one more',
  );
  const registry = (maxParallel: number) =>
    parseRegistry(
      `[repos.web]\npath = "/srv/web"\nproxy_port = 700\nmax_parallel = ${maxParallel}\n`,
      '/etc/agent-runner/registry.toml',
      cronScheduler,
    );
  t.same(registry(MAX_PARALLEL_CEILING).problems, [], 'the registry may set the ceiling');
  t.same(
    registry(MAX_PARALLEL_CEILING + 1).problems.map((p) => p.key),
    ['repos.web.max_parallel'],
    'but not one more',
  );
  t.equal(
    applyOverrides(validateConfig({ maxParallel: MAX_PARALLEL_CEILING }).config, { maxParallel: 99 }).maxParallel,
    MAX_PARALLEL_CEILING,
    'nothing raises a run above it',
  );
});

t.test('one effort list per assistant, the same check for config, labels and flags', async (t) => {
  const table: [AssistantName, string, boolean][] = [
    ['claude', 'max', true],
    ['claude', 'xhigh', true],
    ['claude', 'minimal', false],
    ['codex', 'minimal', true],
    ['codex', 'max', false],
    ['claude', 'bogus', false],
    ['command', 'max', true],
  ];
  for (const [assistant, effort, accepted] of table) {
    const extra = assistant === 'command' ? { command: ['./agent.sh'] } : {};
    const config = validateConfig({ assistant, effort, ...extra }, 'c.json');
    t.equal(config.problems.length === 0, accepted, `config: ${assistant} ${effort}`);
    t.equal(effortProblem(assistant, effort) === undefined, accepted, `flag: ${assistant} ${effort}`);
    const choice = resolveModelChoice(
      { ...DEFAULT_CONFIG, assistant, ...extra },
      aTask({ id: 'TASK-1', labels: [`effort:${effort}`] }),
    );
    t.equal(choice.problem === undefined, accepted, `label: ${assistant} ${effort}`);
    if (!accepted)
      t.match(
        choice.problem,
        `label "effort:${effort}" "${effort}" is not an effort ${assistant} accepts (${EFFORTS[assistant].join(', ')})`,
      );
    t.equal(
      escalationProblems(assistant, aTask({ id: 'TASK-1', labels: [`effort:${effort}`] })).length === 0,
      accepted,
      `readiness: ${assistant} ${effort}`,
    );
  }
});

t.test('maxBatch: default 8, 1 gates each task alone, out of range is named with the fix', async (t) => {
  t.equal(validateConfig({}).config.maxBatch, 8);
  t.equal(validateConfig({ maxBatch: 1 }).config.maxBatch, 1);
  for (const bad of [0, 65, 2.5, '4']) {
    const result = validateConfig({ maxBatch: bad });
    t.same(
      result.problems.map((p) => [p.key, p.problem]),
      [['maxBatch', 'must be a whole number from 1 to 64']],
      `maxBatch ${JSON.stringify(bad)}`,
    );
  }
});
