import t from 'tap';
import { isUnreadable, parseTaskFile, MAX_TASK_FILE_BYTES } from '../../src/board/parse.js';
import { taskFileText } from '../helpers/board-builder.js';

const FILE = 'backlog/tasks/task-2 - Second.md';

t.test('every field of a CLI-written task file', async (t) => {
  const text = taskFileText({
    id: 'TASK-2',
    title: 'Second: task',
    status: 'In Progress',
    assignee: ['alice', '@bob'],
    createdDate: '2026-11-29 14:35',
    updatedDate: '2026-11-29 15:00',
    labels: ['area:api', 'model:opus', 'yes'],
    dependencies: ['TASK-1', 'task-7.1'],
    priority: 'high',
    ordinal: 3,
    description: 'Line one\nLine two',
    acceptanceCriteria: ['Crit one', { text: 'Crit two', checked: true }],
    notes: 'first note\n\nParked: flaky (branch auto/TASK-2)',
  });
  t.same(parseTaskFile(FILE, text), {
    id: 'TASK-2',
    title: 'Second: task',
    status: 'In Progress',
    labels: ['area:api', 'model:opus', 'yes'],
    dependencies: ['TASK-1', 'task-7.1'],
    priority: 'high',
    ordinal: 3,
    assignee: ['alice', '@bob'],
    description: 'Line one\nLine two',
    acceptanceCriteria: [
      { index: 1, text: 'Crit one', checked: false },
      { index: 2, text: 'Crit two', checked: true },
    ],
    notes: 'first note\n\nParked: flaky (branch auto/TASK-2)',
    file: FILE,
  });
});

t.test('a minimal file, flow lists, a single assignee string, hand-written sections', async (t) => {
  const text = [
    '---',
    'id: TASK-9',
    'title: Nine',
    'status: To Do',
    'assignee: carol',
    'labels: [a, "b c"]',
    'dependencies: []',
    'priority: Low',
    '---',
    '',
    '## Description',
    '',
    'Plain description.',
    '',
    '## Acceptance Criteria',
    '',
    '- [ ] first',
    '- [x] second',
    ' - [x] indented: text, as for the CLI',
    '- [X] upper-case: text, as for the CLI',
    '',
    '## Implementation Notes',
    '',
    'A note.',
    '',
  ].join('\n');
  t.same(parseTaskFile('x.md', text), {
    id: 'TASK-9',
    title: 'Nine',
    status: 'To Do',
    labels: ['a', 'b c'],
    dependencies: [],
    priority: 'low',
    ordinal: undefined,
    assignee: ['carol'],
    description: 'Plain description.',
    acceptanceCriteria: [
      { index: 1, text: 'first', checked: false },
      { index: 2, text: 'second', checked: true },
    ],
    notes: 'A note.',
    file: 'x.md',
  });
});

t.test('malformed files are unreadable with the reason', async (t) => {
  const head = (lines: string[]) => `---\n${lines.join('\n')}\n---\n\nbody\n`;
  const cases: [string, string, { file: string; reason: string; id?: string }][] = [
    [
      'no frontmatter',
      '# Just a heading\n',
      {
        file: 'f.md',
        reason: 'no frontmatter: the file must start with a --- line, then YAML, then a closing --- line',
      },
    ],
    [
      'unclosed frontmatter',
      '---\nid: TASK-1\ntitle: x\n',
      {
        file: 'f.md',
        reason: 'no frontmatter: the file must start with a --- line, then YAML, then a closing --- line',
      },
    ],
    [
      'bad YAML',
      head(['id: TASK-4', 'title: [unclosed', 'status: To Do']),
      {
        file: 'f.md',
        id: 'TASK-4',
        reason:
          'bad YAML in the frontmatter: Flow sequence in block collection must be sufficiently indented and end with a ]',
      },
    ],
    [
      'duplicate key',
      head(['id: TASK-4', 'id: TASK-5', 'status: To Do']),
      { file: 'f.md', reason: 'bad YAML in the frontmatter: Map keys must be unique' },
    ],
    [
      'a list, not a mapping',
      head(['- a', '- b']),
      { file: 'f.md', reason: 'the frontmatter is not a YAML mapping of fields (id, title, status, ...)' },
    ],
    ['no id', head(['title: x', 'status: To Do']), { file: 'f.md', reason: 'no id in the frontmatter' }],
    [
      'path traversal id',
      head(["id: '../../x'", 'status: To Do']),
      {
        file: 'f.md',
        reason: 'id "../../x" is not a safe task id (expected a prefix, a dash and a number, like TASK-12)',
      },
    ],
    [
      'shell metacharacters',
      head(["id: 'TASK-1; rm -rf /'", 'status: To Do']),
      {
        file: 'f.md',
        reason: 'id "TASK-1; rm -rf /" is not a safe task id (expected a prefix, a dash and a number, like TASK-12)',
      },
    ],
    [
      'id with a space',
      head(["id: 'TASK 1'", 'status: To Do']),
      {
        file: 'f.md',
        reason: 'id "TASK 1" is not a safe task id (expected a prefix, a dash and a number, like TASK-12)',
      },
    ],
    [
      'option-like id',
      head(["id: '--force-1'", 'status: To Do']),
      {
        file: 'f.md',
        reason: 'id "--force-1" is not a safe task id (expected a prefix, a dash and a number, like TASK-12)',
      },
    ],
    [
      'git ref trick',
      head(["id: 'TASK-1..HEAD'", 'status: To Do']),
      {
        file: 'f.md',
        reason: 'id "TASK-1..HEAD" is not a safe task id (expected a prefix, a dash and a number, like TASK-12)',
      },
    ],
    [
      'numeric id',
      head(['id: 12', 'status: To Do']),
      { file: 'f.md', reason: 'id "12" is not a safe task id (expected a prefix, a dash and a number, like TASK-12)' },
    ],
    [
      'bad dependency',
      head(['id: TASK-3', 'status: To Do', "dependencies: ['../TASK-1']"]),
      { file: 'f.md', id: 'TASK-3', reason: 'dependency "../TASK-1" is not a task id (like TASK-12)' },
    ],
    [
      'unclosed AC section',
      '---\nid: TASK-3\nstatus: To Do\n---\n<!-- AC:BEGIN -->\n- [ ] #1 a\n',
      { file: 'f.md', id: 'TASK-3', reason: 'the <!-- AC:BEGIN --> marker has no matching <!-- AC:END --> marker' },
    ],
  ];
  for (const [name, text, expected] of cases) {
    const result = parseTaskFile('f.md', text);
    t.same(result, expected, name);
    t.equal(isUnreadable(result), true, `${name} is unreadable`);
  }
});

t.test('files the CLI reads are read as the CLI reads them (2a)', async (t) => {
  const head = (lines: string[]) => `---\n${lines.join('\n')}\n---\n\nbody\n`;
  const read = (lines: string[]) => {
    const result = parseTaskFile('f.md', head(lines));
    if (isUnreadable(result)) throw new Error(result.reason);
    return result;
  };
  t.same(
    read(['id: TASK-3', 'status: To Do', 'assignee: @alice', 'reporter: @bob']).assignee,
    ['@alice'],
    'an unquoted @handle, as the CLI quotes it',
  );
  t.same(
    read(['id: TASK-3', 'status: To Do', 'assignee: [@alice, "@carol", dave]']).assignee,
    ['@alice', '@carol', 'dave'],
    'handles in a flow list',
  );
  t.same(read(['id: TASK-3', 'status: To Do', 'assignee: alice']).assignee, ['alice'], 'a single assignee');
  t.equal(read(['id: TASK-3', 'title: x']).status, '', 'no status: readable; readiness says why it is not ready');
  t.same(
    read(['id: TASK-3', 'status: To Do', 'labels: {a: 1}', 'dependencies: TASK-1']).labels,
    [],
    'labels or dependencies that are not lists are ignored, as by the CLI',
  );
  t.same(read(['id: TASK-3', 'status: To Do', 'dependencies: TASK-1']).dependencies, []);
  t.equal(
    read(['id: TASK-3', 'status: To Do', 'priority: urgent']).priority,
    undefined,
    'a free-text or configured priority sorts as none',
  );
  t.equal(read(['id: TASK-3', 'status: To Do', 'priority: " HIGH "']).priority, 'high');
  t.equal(
    read(['id: TASK-3', 'status: To Do', 'ordinal: soon']).ordinal,
    undefined,
    'an ordinal that is not a number is no ordinal',
  );
  t.equal(
    read(['id: TASK-3', 'status: To Do', "ordinal: '1500'"]).ordinal,
    1500,
    'a quoted number is a number, as Number() reads it',
  );
  t.equal(read(['id: task-03', 'status: To Do']).id, 'TASK-03', "the id in the CLI's case");
});

t.test('a 5 MiB file is unreadable without being parsed', async (t) => {
  const text = taskFileText({
    id: 'TASK-1',
    title: 'Big',
    createdDate: '2026-11-29 14:35',
    description: 'x'.repeat(5 * 1024 * 1024),
  });
  const size = Buffer.byteLength(text);
  t.same(parseTaskFile('big.md', text), {
    file: 'big.md',
    reason: `the file is ${size} bytes, over the ${MAX_TASK_FILE_BYTES}-byte (1 MiB) limit for a task file`,
  });
});

t.test('isUnreadable tells the two apart', async (t) => {
  const task = parseTaskFile('a.md', taskFileText({ id: 'TASK-1', title: 'A', createdDate: '2026-11-29 14:35' }));
  t.equal(isUnreadable(task), false);
  t.equal(isUnreadable({ file: 'b.md', reason: 'x' }), true);
});
