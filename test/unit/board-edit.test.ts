import t from 'tap';
import {
  addLabel,
  appendNote,
  backlogTimestamp,
  checkCriterion,
  ensureBlockedStatus,
  removeLabel,
  setStatus,
  setUpdatedDate,
} from '../../src/board/edit.js';
import { UsageError } from '../../src/errors.js';
import { taskFileText } from '../helpers/board-builder.js';

const base = {
  id: 'TASK-2',
  title: 'Second: task',
  createdDate: '2026-11-29 14:35',
  labels: ['area:api', 'model:opus'],
  dependencies: ['TASK-1'],
  priority: 'high' as const,
  ordinal: 3,
  description: 'Line one\nLine two',
  acceptanceCriteria: ['Crit one', 'Crit two'],
};
const TEXT = taskFileText(base);

t.test('setStatus changes the status line only', async (t) => {
  t.equal(setStatus(TEXT, 'In Progress'), TEXT.replace('status: To Do\n', 'status: In Progress\n'));
  t.equal(setStatus(TEXT, 'Done'), taskFileText({ ...base, status: 'Done' }));
  t.equal(setStatus(TEXT, 'Wait: later'), TEXT.replace('status: To Do\n', "status: 'Wait: later'\n"));
  const noStatus = '---\nid: TASK-1\ntitle: >-\n  folded\n  title\nlabels: []\n---\n\nbody\n';
  t.equal(
    setStatus(noStatus, 'Blocked'),
    '---\nid: TASK-1\ntitle: >-\n  folded\n  title\nstatus: Blocked\nlabels: []\n---\n\nbody\n',
  );
  t.throws(() => setStatus('no frontmatter\n', 'Done'), {
    message: 'the task file has no frontmatter (--- ... ---) to edit',
  });
});

t.test('setUpdatedDate inserts after created_date, then replaces', async (t) => {
  const once = setUpdatedDate(TEXT, '2026-11-29 15:00');
  t.equal(once, taskFileText({ ...base, updatedDate: '2026-11-29 15:00' }));
  t.equal(setUpdatedDate(once, '2026-11-30 09:05'), taskFileText({ ...base, updatedDate: '2026-11-30 09:05' }));
  t.equal(backlogTimestamp(Date.UTC(2026, 10, 29, 14, 35, 59)), '2026-11-29 14:35');
});

t.test('addLabel in every list style', async (t) => {
  t.equal(addLabel(TEXT, 'parked'), taskFileText({ ...base, labels: ['area:api', 'model:opus', 'parked'] }));
  t.equal(
    addLabel(TEXT, 'risk:needs-human'),
    TEXT.replace("  - 'model:opus'\n", "  - 'model:opus'\n  - 'risk:needs-human'\n"),
  );
  t.equal(addLabel(TEXT, 'area:api'), TEXT, 'already there: unchanged');
  const empty = taskFileText({ ...base, labels: [] });
  t.equal(addLabel(empty, 'parked'), taskFileText({ ...base, labels: ['parked'] }));
  const flow = '---\nid: TASK-1\nstatus: To Do\nlabels: [a, "b c"] # keep\ndependencies: []\n---\n';
  t.equal(
    addLabel(flow, 'yes'),
    '---\nid: TASK-1\nstatus: To Do\nlabels: [a, "b c", \'yes\'] # keep\ndependencies: []\n---\n',
  );
  const unindented = '---\nid: TASK-1\nlabels:\n- a\n- b\n\nstatus: To Do\n---\n';
  t.equal(addLabel(unindented, 'c'), '---\nid: TASK-1\nlabels:\n- a\n- b\n- c\n\nstatus: To Do\n---\n');
  const absent = '---\nid: TASK-1\nstatus: To Do\ndependencies: []\n---\nbody\n';
  t.equal(
    addLabel(absent, 'parked'),
    '---\nid: TASK-1\nstatus: To Do\nlabels:\n  - parked\ndependencies: []\n---\nbody\n',
  );
  const scalar = '---\nid: TASK-1\nlabels: solo\n---\n';
  t.equal(addLabel(scalar, 'b'), '---\nid: TASK-1\nlabels:\n  - solo\n  - b\n---\n');
});

t.test('removeLabel in every list style', async (t) => {
  t.equal(removeLabel(TEXT, 'area:api'), taskFileText({ ...base, labels: ['model:opus'] }));
  t.equal(removeLabel(removeLabel(TEXT, 'area:api'), 'model:opus'), taskFileText({ ...base, labels: [] }));
  t.equal(removeLabel(TEXT, 'nope'), TEXT);
  const flow = '---\nid: TASK-1\nlabels: [a, parked, "b c"]\n---\n';
  t.equal(removeLabel(flow, 'parked'), '---\nid: TASK-1\nlabels: [a, b c]\n---\n');
  t.equal(removeLabel('---\nid: TASK-1\nlabels: [parked]\n---\n', 'parked'), '---\nid: TASK-1\nlabels: []\n---\n');
});

t.test('appendNote creates the section where the CLI does, then appends', async (t) => {
  const bare = taskFileText({ id: 'TASK-4', title: 'Fourth', createdDate: '2026-11-29 14:36', ordinal: 3000 });
  t.equal(
    appendNote(bare, 'n1\nn2'),
    taskFileText({ id: 'TASK-4', title: 'Fourth', createdDate: '2026-11-29 14:36', ordinal: 3000, notes: 'n1\nn2' }),
  );
  const once = appendNote(TEXT, 'Parked: flaky (branch auto/TASK-2)\n');
  t.equal(once, taskFileText({ ...base, notes: 'Parked: flaky (branch auto/TASK-2)' }));
  t.equal(appendNote(once, 'second'), taskFileText({ ...base, notes: 'Parked: flaky (branch auto/TASK-2)\n\nsecond' }));
  t.equal(appendNote(TEXT, '  \n'), TEXT, 'an empty note changes nothing');
  const withLater = `${TEXT}\n## Comments\n\n<!-- COMMENTS:BEGIN -->\ncreated: 2026-11-29 14:36\n---\nhi\n---\n<!-- COMMENTS:END -->\n\n## Final Summary\n\n<!-- SECTION:FINAL_SUMMARY:BEGIN -->\nsum\n<!-- SECTION:FINAL_SUMMARY:END -->\n`;
  t.equal(
    appendNote(withLater, 'late'),
    `${TEXT}\n## Implementation Notes\n\n<!-- SECTION:NOTES:BEGIN -->\nlate\n<!-- SECTION:NOTES:END -->\n\n## Comments\n\n<!-- COMMENTS:BEGIN -->\ncreated: 2026-11-29 14:36\n---\nhi\n---\n<!-- COMMENTS:END -->\n\n## Final Summary\n\n<!-- SECTION:FINAL_SUMMARY:BEGIN -->\nsum\n<!-- SECTION:FINAL_SUMMARY:END -->\n`,
  );
  t.equal(
    appendNote(bare, 'x <!-- SECTION:NOTES:END --> y'),
    taskFileText({
      id: 'TASK-4',
      title: 'Fourth',
      createdDate: '2026-11-29 14:36',
      ordinal: 3000,
      notes: 'x <! -- SECTION:NOTES:END --> y',
    }),
    'a note cannot close the section',
  );
  const emptySection = bare.replace(
    /\n$/,
    '## Implementation Notes\n\n<!-- SECTION:NOTES:BEGIN -->\n<!-- SECTION:NOTES:END -->\n',
  );
  t.equal(appendNote(emptySection, 'first'), emptySection.replace('BEGIN -->\n<!--', 'BEGIN -->\nfirst\n<!--'));
  const crlf = '---\r\nid: TASK-1\r\nstatus: To Do\r\n---\r\n\r\nbody\r\n';
  t.equal(
    appendNote(crlf, 'a\nb'),
    '---\r\nid: TASK-1\r\nstatus: To Do\r\n---\r\n\r\nbody\r\n\r\n## Implementation Notes\r\n\r\n<!-- SECTION:NOTES:BEGIN -->\r\na\r\nb\r\n<!-- SECTION:NOTES:END -->\r\n',
  );
});

t.test('checkCriterion checks one box', async (t) => {
  t.equal(
    checkCriterion(TEXT, 2),
    taskFileText({ ...base, acceptanceCriteria: ['Crit one', { text: 'Crit two', checked: true }] }),
  );
  const checked = checkCriterion(TEXT, 1);
  t.equal(checked, TEXT.replace('- [ ] #1', '- [x] #1'));
  t.equal(checkCriterion(checked, 1), checked, 'already checked: unchanged');
  t.throws(() => checkCriterion(TEXT, 3), { message: 'no acceptance criterion #3' });
  t.throws(() => checkCriterion(taskFileText({ id: 'TASK-1', title: 'A', createdDate: '2026-11-29 14:35' }), 1), {
    message: 'no acceptance criteria section (<!-- AC:BEGIN --> ... <!-- AC:END -->) to check #1 in',
  });
});

const CONFIG = 'project_name: "X"\ndefault_status: "To Do"\nstatuses: ["To Do", "In Progress", "Done"]\nlabels: []\n';

t.test('ensureBlockedStatus adds Blocked before Done', async (t) => {
  const once = ensureBlockedStatus(CONFIG);
  t.equal(
    once,
    'project_name: "X"\ndefault_status: "To Do"\nstatuses: ["To Do", "In Progress", "Blocked", "Done"]\nlabels: []\n',
  );
  t.equal(ensureBlockedStatus(once), once, 'unchanged when present');
  t.equal(
    ensureBlockedStatus('statuses:\n  - To Do\n  - Done\n  - Archived\nother: 1\n'),
    'statuses:\n  - To Do\n  - Blocked\n  - Done\n  - Archived\nother: 1\n',
  );
  t.equal(
    ensureBlockedStatus('statuses: [Open, Closed]\n'),
    'statuses: ["Open", "Blocked", "Closed"]\n',
    'no Done: before the last, which the CLI treats as done',
  );
  t.equal(
    ensureBlockedStatus('project_name: "X"'),
    'project_name: "X"\nstatuses: ["To Do", "In Progress", "Blocked", "Done"]\n',
  );
  t.throws(() => ensureBlockedStatus('statuses: [unclosed\n'), UsageError);
  t.throws(() => ensureBlockedStatus('statuses: 3\n'), {
    message:
      'backlog/config.yml: statuses: is not a list of status names; write it as statuses: ["To Do", "In Progress", "Blocked", "Done"]',
  });
});
