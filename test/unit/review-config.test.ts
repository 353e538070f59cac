// .agent/config.json's `review` block: defaults, every bad value named
// review.<key> with its fix, and the registry's "required" on top.
import t from 'tap';
import { DEFAULT_CONFIG, parseRepoConfig, validateConfig } from '../../src/repo/config.js';
import { DEFAULT_REVIEW, effectiveReview, validateReview } from '../../src/repo/review-config.js';
import { formatProblems } from '../../src/errors.js';

t.test('no review block: the defaults, review off', async (t) => {
  t.same(validateConfig({}).config.review, DEFAULT_REVIEW);
  t.same(DEFAULT_CONFIG.review, {
    enabled: false,
    assistant: 'other',
    model: undefined,
    maxRounds: 2,
    blockingSeverities: ['blocker', 'major'],
    requireDiffEvidence: true,
    preGate: false,
    prompt: undefined,
    timeoutSec: 1800,
  });
  t.same(validateConfig({ review: {} }).config.review, DEFAULT_REVIEW, 'an empty block too');
});

t.test('a full review block is read as written; null is the default for model and prompt', async (t) => {
  const review = {
    enabled: true,
    assistant: 'codex',
    model: 'gpt-5',
    maxRounds: 0,
    blockingSeverities: ['blocker'],
    requireDiffEvidence: false,
    preGate: true,
    prompt: '.agent/review.md',
    timeoutSec: 30,
  };
  const result = validateConfig({ review });
  t.same(result.problems, []);
  t.same(result.config.review, review);
  t.same(validateConfig({ review: { model: null, prompt: null, blockingSeverities: [] } }).config.review, {
    ...DEFAULT_REVIEW,
    blockingSeverities: [],
  });
  t.same(validateConfig({ review: { '// why': 'comments are allowed', enabled: true } }).problems, []);
});

t.test('every bad value is named review.<key>, with its fix, all at once', async (t) => {
  const result = validateConfig(
    {
      review: {
        enabled: 'yes',
        assistant: 'gpt',
        model: 'bad model!',
        maxRounds: 6,
        blockingSeverities: ['major', 'critical'],
        requireDiffEvidence: 1,
        preGate: 'no',
        prompt: '../outside.md',
        timeoutSec: 10,
        rounds: 3,
      },
    },
    'repo/.agent/config.json',
  );
  t.same(
    result.problems.map((p) => `${p.key}: ${p.problem}`),
    [
      'review.rounds: is not a known key',
      'review.enabled: must be true or false',
      'review.assistant: must be one of other, same, claude, codex, command',
      `review.model: ${validateReview({ model: 'bad model!' }, 'x').problems[0]!.problem}`,
      'review.maxRounds: must be a whole number from 0 to 5',
      'review.blockingSeverities: must be a list of severities (blocker, major, minor, nit)',
      'review.requireDiffEvidence: must be true or false',
      'review.preGate: must be true or false',
      'review.prompt: must be a relative path inside the repo',
      'review.timeoutSec: must be a whole number from 30 to 86400',
    ],
  );
  for (const problem of result.problems) {
    t.equal(problem.file, 'repo/.agent/config.json');
    t.match(problem.fix, /^(set "review\.\w+"|remove it)/, `${problem.key} says how to fix it`);
  }
  t.equal(
    formatProblems(result.problems.filter((p) => p.key === 'review.rounds')),
    'repo/.agent/config.json: review.rounds: is not a known key; remove it or use one of enabled, assistant, model, maxRounds, blockingSeverities, requireDiffEvidence, preGate, prompt, timeoutSec',
  );
  t.equal(
    formatProblems(result.problems.filter((p) => p.key === 'review.maxRounds')),
    'repo/.agent/config.json: review.maxRounds: must be a whole number from 0 to 5; set "review.maxRounds" to the most fix rounds after a review asks for changes, 0 to 5 (default 2; 0 parks on the first request)',
  );
  t.same(
    validateConfig({ review: { blockingSeverities: ['major', 'major'] } }).problems.map((p) => p.problem),
    ['lists a severity twice'],
  );
  t.same(
    validateConfig({ review: { model: 5, prompt: '' } }).problems.map((p) => p.key),
    ['review.model', 'review.prompt'],
  );
});

t.test('review must be an object', async (t) => {
  for (const value of [true, 'on', [], null, 3]) {
    const result = validateConfig({ review: value });
    t.same(
      result.problems.map((p) => [p.key, p.problem, p.fix]),
      [['review', 'must be an object', 'write an object like "review": {"enabled": true}, or remove it']],
      JSON.stringify(value),
    );
    t.same(result.config.review, DEFAULT_REVIEW);
  }
});

t.test('a command reviewer needs the command argv', async (t) => {
  t.same(
    validateConfig({ review: { enabled: true, assistant: 'command' } }).problems.map((p) => [p.key, p.problem]),
    [['review.assistant', 'is "command" but "command" is not set']],
  );
  t.same(validateConfig({ command: ['./agent.sh'], review: { assistant: 'command' } }).problems, []);
  t.same(
    validateConfig({ assistant: 'command', review: { assistant: 'command' } }).problems.map((p) => p.key),
    ['command'],
    'one problem when the implementer lacks it too',
  );
});

t.test('parseRepoConfig throws every review problem in one message', async (t) => {
  t.throws(() => parseRepoConfig('{"review": {"maxRounds": -1, "x": 1}}', 'c.json'), {
    message:
      'invalid config, 2 problem(s):\nc.json: review.x: is not a known key; remove it or use one of enabled, assistant, model, maxRounds, blockingSeverities, requireDiffEvidence, preGate, prompt, timeoutSec\nc.json: review.maxRounds: must be a whole number from 0 to 5; set "review.maxRounds" to the most fix rounds after a review asks for changes, 0 to 5 (default 2; 0 parks on the first request)',
  });
});

t.test('effectiveReview: the registry can turn review on, never off', async (t) => {
  const off = DEFAULT_REVIEW;
  const on = { ...DEFAULT_REVIEW, enabled: true, maxRounds: 1 };
  t.same(effectiveReview(off, 'required'), { ...off, enabled: true });
  t.equal(effectiveReview(off, 'optional'), off);
  t.equal(effectiveReview(on, 'required'), on, 'already on: the repo settings as they are');
  t.equal(effectiveReview(on, 'optional'), on);
});
