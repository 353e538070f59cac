import t from 'tap';
import { assessReadiness, compareIds, describeReason } from '../../src/board/readiness.js';
import { labelCheckFor } from '../../src/repo/escalation.js';
import { aBoard, aTask } from '../helpers/board-builder.js';

const ids = (tasks: readonly { id: string }[]) => tasks.map((task) => task.id);

t.test('ready: To Do, every dependency Done, no needs-human, not parked', async (t) => {
  const board = aBoard()
    .withTask({ id: 'TASK-1', status: 'Done' })
    .withTask({ id: 'TASK-2', dependencies: ['TASK-1'] })
    .withTask({ id: 'TASK-3', status: 'In Progress' })
    .withTask({ id: 'TASK-4', dependencies: ['task-1', 'TASK-3'] })
    .withTask({ id: 'TASK-5', dependencies: ['TASK-9'] })
    .withTask({ id: 'TASK-6', labels: ['risk:needs-human'] })
    .withTask({
      id: 'TASK-7',
      labels: ['parked'],
      notes: 'tried\nParked: old reason (branch auto/TASK-7)\nParked: gate red twice (branch auto/TASK-7)\nmore',
    })
    .withTask({ id: 'TASK-8', labels: ['parked'] })
    .withTask({ id: 'TASK-10', status: 'Blocked', dependencies: ['TASK-11'], labels: ['risk:needs-human', 'parked'] })
    .withTask({ id: 'TASK-12', dependencies: ['TASK-13'] })
    .withUnreadable({ file: 'backlog/tasks/task-13 - X.md', id: 'TASK-13', reason: 'bad YAML in the frontmatter: x' })
    .withUnreadable({ file: 'backlog/tasks/junk.md', reason: 'no id in the frontmatter' })
    .build();
  const readiness = assessReadiness(board, labelCheckFor('claude'));
  t.same(ids(readiness.ready), ['TASK-2']);
  t.same(
    readiness.notReady.map((entry) => [entry.id, entry.reasons.map(describeReason)]),
    [
      ['TASK-1', ['Done']],
      ['TASK-3', ['status In Progress']],
      ['TASK-4', ['blocked by TASK-3 (In Progress)']],
      ['TASK-5', ['depends on TASK-9, which does not exist']],
      ['TASK-6', ['needs a human']],
      ['TASK-7', ['parked: gate red twice (branch auto/TASK-7)']],
      ['TASK-8', ['parked']],
      ['TASK-10', ['status Blocked', 'depends on TASK-11, which does not exist', 'needs a human', 'parked']],
      ['TASK-12', ['blocked by TASK-13 (unreadable)']],
      // unreadable files last, by file name
      ['', ['unreadable: no id in the frontmatter']],
      ['TASK-13', ['unreadable: bad YAML in the frontmatter: x']],
    ],
  );
  const unreadable = readiness.notReady.find((entry) => entry.file === 'backlog/tasks/junk.md');
  t.same(unreadable, {
    id: '',
    file: 'backlog/tasks/junk.md',
    title: '',
    reasons: [{ kind: 'unreadable', reason: 'no id in the frontmatter' }],
  });
});

t.test('order: priority, then ordinal, then the number in the id', async (t) => {
  const board = aBoard()
    .withTask({ id: 'TASK-10' })
    .withTask({ id: 'TASK-2' })
    .withTask({ id: 'TASK-3', priority: 'low' })
    .withTask({ id: 'TASK-4', priority: 'high', ordinal: 2000 })
    .withTask({ id: 'TASK-5', priority: 'high', ordinal: 1000 })
    .withTask({ id: 'TASK-6', priority: 'medium' })
    .withTask({ id: 'TASK-7', priority: 'high' })
    .withTask({ id: 'TASK-8', ordinal: 5 })
    .withTask({ id: 'TASK-2.1' })
    .build();
  t.same(ids(assessReadiness(board, labelCheckFor('claude')).ready), [
    'TASK-5',
    'TASK-4',
    'TASK-7',
    'TASK-6',
    'TASK-3',
    'TASK-8',
    'TASK-2',
    'TASK-2.1',
    'TASK-10',
  ]);
});

t.test('compareIds is numeric', async (t) => {
  t.same(['TASK-10', 'TASK-2', 'TASK-1.10', 'TASK-1.2', 'TASK-1'].sort(compareIds), [
    'TASK-1',
    'TASK-1.2',
    'TASK-1.10',
    'TASK-2',
    'TASK-10',
  ]);
});

t.test('describeReason gives the exact wording', async (t) => {
  t.equal(
    describeReason({ kind: 'blocked-by', dependency: 'TASK-3', dependencyStatus: 'In Progress' }),
    'blocked by TASK-3 (In Progress)',
  );
  t.equal(
    describeReason({ kind: 'missing-dependency', dependency: 'TASK-9' }),
    'depends on TASK-9, which does not exist',
  );
  t.equal(describeReason({ kind: 'needs-human' }), 'needs a human');
  t.equal(describeReason({ kind: 'parked', note: 'flaky (branch auto/TASK-3)' }), 'parked: flaky (branch auto/TASK-3)');
  t.equal(describeReason({ kind: 'parked', note: '' }), 'parked');
  t.equal(describeReason({ kind: 'done' }), 'Done');
  t.equal(describeReason({ kind: 'status', status: 'Blocked' }), 'status Blocked');
  t.equal(
    describeReason({ kind: 'unreadable', reason: 'no id in the frontmatter' }),
    'unreadable: no id in the frontmatter',
  );
});

t.test('an empty board has nothing ready and nothing not ready', async (t) => {
  t.same(assessReadiness(aBoard().build(), labelCheckFor('claude')), { ready: [], notReady: [] });
});

t.test('a ready task is returned as the same object', async (t) => {
  const board = aBoard()
    .withTask(aTask({ id: 'TASK-1' }))
    .build();
  t.equal(assessReadiness(board, labelCheckFor('claude')).ready[0], board.tasks[0]);
});

t.test('a task without a status is not ready, with that reason', async (t) => {
  const readiness = assessReadiness(aBoard().withTask({ id: 'TASK-1', status: '' }).build(), labelCheckFor('claude'));
  t.same(readiness.ready, []);
  t.same(
    readiness.notReady.map((entry) => entry.reasons.map(describeReason)),
    [['no status (set one, e.g. status: To Do)']],
  );
});

t.test(
  'a task whose model:/effort: labels its assistant cannot take is not ready, with the label, values and fix',
  async (t) => {
    const cases: readonly [string, readonly string[], 'claude' | 'codex' | undefined, (string | RegExp)[]][] = [
      [
        'empty effort',
        ['effort:'],
        'codex',
        [
          'label "effort:" has no effort; codex accepts minimal, low, medium, high, xhigh; fix: write one of them (effort:high), or remove the label',
        ],
      ],
      [
        'empty effort, spaces',
        ['Effort:   '],
        'claude',
        [
          'label "Effort:   " has no effort; claude accepts low, medium, high, xhigh, max; fix: write one of them (effort:high), or remove the label',
        ],
      ],
      [
        'shell metacharacters in an effort',
        ['effort:; touch /tmp/x'],
        'claude',
        [
          'label "effort:; touch /tmp/x" "; touch /tmp/x" is not an effort claude accepts (low, medium, high, xhigh, max); fix: set it to one of those, or remove the label',
        ],
      ],
      [
        'unknown effort',
        ['effort:turbo'],
        'codex',
        [
          'label "effort:turbo" "turbo" is not an effort codex accepts (minimal, low, medium, high, xhigh); fix: set it to one of those, or remove the label',
        ],
      ],
      [
        'an effort another assistant takes',
        ['effort:max'],
        'codex',
        [
          'label "effort:max" "max" is not an effort codex accepts (minimal, low, medium, high, xhigh); fix: set it to one of those, or remove the label',
        ],
      ],
      ["the same, config unreadable: every assistant's efforts count", ['effort:max'], undefined, []],
      [
        'unknown effort, config unreadable',
        ['effort:turbo'],
        undefined,
        [
          'label "effort:turbo" "turbo" is not an effort any assistant accepts (low, medium, high, xhigh, max, minimal); fix: set it to one of those, or remove the label',
        ],
      ],
      [
        'empty model',
        ['model:'],
        'claude',
        ['label "model:" has no model id; fix: write the model id (model:sonnet), or remove the label'],
      ],
      [
        'a model that reads as a flag',
        ['model:--dangerously-skip-permissions'],
        'claude',
        [
          'label "model:--dangerously-skip-permissions" "--dangerously-skip-permissions" is not a model id (a letter or digit, then letters, digits and . _ : / @ [ ] - (at most 100 characters)); fix: write the model id as the assistant takes it (model:claude-sonnet-4-5), or remove the label',
        ],
      ],
      [
        'shell metacharacters in a model',
        ['model:$(touch /tmp/x)'],
        'codex',
        [
          'label "model:$(touch /tmp/x)" "$(touch /tmp/x)" is not a model id (a letter or digit, then letters, digits and . _ : / @ [ ] - (at most 100 characters)); fix: write the model id as the assistant takes it (model:claude-sonnet-4-5), or remove the label',
        ],
      ],
      ['a space in a model', ['model:opus 4'], 'claude', [/"opus 4" is not a model id/]],
      [
        'a newline or an escape in a model, quoted',
        ['model:a\nb', 'model:x\u001b[31m'],
        'claude',
        [/^label "model:a\\nb" "a\\nb" is not a model id/, /^label "model:x\\u001b\[31m"/],
      ],
      ['a model of 101 characters', [`model:${'a'.repeat(101)}`], 'claude', [/is not a model id/]],
      [
        'two efforts',
        ['effort:high', 'effort:low'],
        'claude',
        [
          'label "effort:high, effort:low" ask for different efforts (high, low), and none of them wins; fix: keep one effort: label',
        ],
      ],
      [
        'two models',
        ['model:opus', 'Model:sonnet'],
        'claude',
        [
          'label "model:opus, Model:sonnet" ask for different models (opus, sonnet), and none of them wins; fix: keep one model: label',
        ],
      ],
      ['the same twice is one ask', ['effort:high', 'Effort: high', 'model:opus', 'model:opus'], 'claude', []],
      ['model ids in use', ['model:claude-sonnet-4-5'], 'claude', []],
      ['bedrock id', ['model:us.anthropic.claude-3-7-sonnet-20250219-v1:0'], 'claude', []],
      ['vertex id, a 1M-context alias, a provider path', ['model:claude-3-5-sonnet@20240620'], 'claude', []],
      ['a 1M-context alias', ['model:sonnet[1m]'], 'claude', []],
      ['a provider path', ['model:anthropic/claude-3.5-sonnet'], 'codex', []],
      ['efforts each takes', ['effort:minimal'], 'codex', []],
      ['other labels are not escalation labels', ['modelling', 'effortless', 'area:model:x'], 'claude', []],
    ];
    for (const [name, labels, assistant, expected] of cases) {
      const board = aBoard().withTask({ id: 'TASK-1', labels }).build();
      const readiness = assessReadiness(board, labelCheckFor(assistant));
      const reasons = readiness.notReady.flatMap((entry) => entry.reasons.map(describeReason));
      t.equal(reasons.length, expected.length, `${name}: ${expected.length ? 'not ready' : 'ready'}`);
      expected.forEach((text, i) =>
        typeof text === 'string' ? t.equal(reasons[i], text, name) : t.match(reasons[i], text, name),
      );
      t.equal(readiness.ready.length, expected.length ? 0 : 1, `${name}: ${expected.length ? 'not' : ''} in ready`);
    }
  },
);

t.test('label problems come with every other reason, and a Done task lists only Done', async (t) => {
  const board = aBoard()
    .withTask({ id: 'TASK-1', status: 'In Progress', labels: ['effort:', 'parked'] })
    .withTask({ id: 'TASK-2', status: 'Done', labels: ['effort:'] })
    .build();
  const readiness = assessReadiness(board, labelCheckFor('claude'));
  t.same(
    readiness.notReady.map((entry) => entry.reasons.map((reason) => reason.kind)),
    [['status', 'parked', 'label'], ['done']],
  );
  t.same(readiness.notReady[0]!.reasons[2], {
    kind: 'label',
    label: 'effort:',
    problem: 'has no effort; claude accepts low, medium, high, xhigh, max',
    fix: 'write one of them (effort:high), or remove the label',
  });
});
