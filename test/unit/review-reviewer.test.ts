// Who reviews (cross-model by default, another model of the same CLI when
// the other is missing) and the trailer an approval leaves on the landing.
import t from 'tap';
import { chooseReviewer, type Implementer, type ReviewerChoice } from '../../src/drain/review/reviewer.js';
import { REVIEW_TRAILER, reviewTrailer } from '../../src/drain/review/trailer.js';
import type { AssistantName, ReviewConfig } from '../../src/types.js';

const both = () => true;
const only =
  (...names: AssistantName[]) =>
  (name: AssistantName) =>
    names.includes(name);

t.test('chooseReviewer', async (t) => {
  const claude: Implementer = { assistant: 'claude', model: 'sonnet' };
  const claudeOpus: Implementer = { assistant: 'claude', model: 'claude-opus-4-1' };
  const codex: Implementer = { assistant: 'codex', model: 'gpt-5' };
  const command: Implementer = { assistant: 'command', model: undefined };
  type Review = Pick<ReviewConfig, 'assistant' | 'model'>;
  const other: Review = { assistant: 'other', model: undefined };
  const rows: [string, Review, Implementer, (name: AssistantName) => boolean, ReviewerChoice][] = [
    ["other: codex reviews claude's work", other, claude, both, { assistant: 'codex', model: undefined }],
    ["other: claude reviews codex's work", other, codex, both, { assistant: 'claude', model: undefined }],
    [
      'other, with a review model',
      { assistant: 'other', model: 'gpt-5-codex' },
      claude,
      both,
      { assistant: 'codex', model: 'gpt-5-codex' },
    ],
    ['other: the command agent reviews itself', other, command, both, { assistant: 'command', model: undefined }],
    [
      'other, codex missing: claude with opus',
      other,
      claude,
      only('claude'),
      {
        assistant: 'claude',
        model: 'opus',
        fallback: 'codex is not available, so claude reviews its own work (model opus)',
      },
    ],
    [
      'other, codex missing, the implementer ran opus: sonnet',
      other,
      claudeOpus,
      only('claude'),
      {
        assistant: 'claude',
        model: 'sonnet',
        fallback: 'codex is not available, so claude reviews its own work (model sonnet)',
      },
    ],
    [
      'other, codex missing, a review model set: that model',
      { assistant: 'other', model: 'haiku' },
      claude,
      only('claude'),
      {
        assistant: 'claude',
        model: 'haiku',
        fallback: 'codex is not available, so claude reviews its own work (model haiku)',
      },
    ],
    [
      'other, claude missing: codex with its own model',
      other,
      codex,
      only('codex'),
      {
        assistant: 'codex',
        model: 'gpt-5',
        fallback: 'claude is not available, so codex reviews its own work (model gpt-5)',
      },
    ],
    [
      'other, claude missing, codex on its default model',
      other,
      { assistant: 'codex', model: undefined },
      only('codex'),
      {
        assistant: 'codex',
        model: undefined,
        fallback: 'claude is not available, so codex reviews its own work (model default)',
      },
    ],
    [
      'same: claude with another model',
      { assistant: 'same', model: undefined },
      claude,
      both,
      { assistant: 'claude', model: 'opus' },
    ],
    [
      'same, with a review model',
      { assistant: 'same', model: 'sonnet' },
      claude,
      both,
      { assistant: 'claude', model: 'sonnet' },
    ],
    ['a named reviewer', { assistant: 'codex', model: 'o3' }, codex, both, { assistant: 'codex', model: 'o3' }],
    [
      'a named reviewer, the other CLI',
      { assistant: 'claude', model: undefined },
      codex,
      both,
      { assistant: 'claude', model: undefined },
    ],
    [
      "a named reviewer that is missing: the implementer's CLI",
      { assistant: 'codex', model: undefined },
      claude,
      only('claude'),
      {
        assistant: 'claude',
        model: 'opus',
        fallback: 'codex is not available, so claude reviews its own work (model opus)',
      },
    ],
  ];
  for (const [name, review, implementer, available, choice] of rows)
    t.same(chooseReviewer(review, implementer, available), choice, name);
});

t.test('reviewTrailer', async (t) => {
  const sha = '0123456789abcdef0123456789abcdef01234567';
  t.equal(REVIEW_TRAILER, 'Agent-Runner-Review');
  t.equal(
    reviewTrailer({ assistant: 'codex', model: 'gpt-5', round: 2, maxRounds: 3, candidate: sha }),
    'approved (codex/gpt-5, round 2/3, 0123456789ab)',
  );
  t.equal(
    reviewTrailer({ assistant: 'claude', model: undefined, round: 1, maxRounds: 1, candidate: sha }),
    'approved (claude/default, round 1/1, 0123456789ab)',
  );
});
