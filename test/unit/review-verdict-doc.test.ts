// The verdict document: the schema the CLIs get is strict (codex's
// --output-schema needs every property required and no others), and
// parseVerdictDoc holds a verdict to exactly that schema, naming each key.
import t from 'tap';
import { VERDICT_SCHEMA, verdictSchemaText, type SchemaNode } from '../../src/drain/review/schema.js';
import { MAX_VERDICT_BYTES, parseVerdictDoc } from '../../src/drain/review/verdict-doc.js';
import { aFinding, aVerdict, met } from '../helpers/review-builders.js';

/** Every node of the schema with its path. */
function nodes(node: SchemaNode, at = '(root)'): [string, SchemaNode][] {
  if (node.type === 'object')
    return [[at, node], ...Object.entries(node.properties).flatMap(([key, child]) => nodes(child, `${at}.${key}`))];
  if (node.type === 'array') return [[at, node], ...nodes(node.items, `${at}[]`)];
  return [[at, node]];
}

t.test('the schema is strict and bounded everywhere', async (t) => {
  const all = nodes(VERDICT_SCHEMA);
  t.equal(all.length, 19, 'walked every node of the schema');
  for (const [at, node] of all) {
    if (node.type === 'object') {
      t.equal(node.additionalProperties, false, `${at}: no other properties`);
      t.same([...node.required].sort(), Object.keys(node.properties).sort(), `${at}: every property required`);
    }
    if (node.type === 'string') t.ok(node.maxLength > 0 && node.maxLength <= 4000, `${at}: bounded`);
    if (node.type === 'array') t.ok(node.maxItems > 0 && node.maxItems <= 100, `${at}: bounded`);
  }
  const text = verdictSchemaText();
  t.notMatch(text, /\n/, 'one line, for a CLI flag');
  t.same(JSON.parse(text), VERDICT_SCHEMA);
  t.equal(VERDICT_SCHEMA.$schema, 'http://json-schema.org/draft-07/schema#');
});

t.test('a verdict in the shape is read as it is', async (t) => {
  const doc = aVerdict({ findings: [aFinding(), aFinding({ severity: 'nit', location: '' })] });
  t.same(parseVerdictDoc(JSON.stringify(doc)), doc);
  t.same(parseVerdictDoc(`\n  ${JSON.stringify(doc)}\n`), doc, 'surrounding whitespace is fine');
});

t.test('each way out of shape is named with its key', async (t) => {
  const shape = (value: unknown) => {
    const result = parseVerdictDoc(JSON.stringify(value));
    return 'problem' in result ? result.problem.replace(/^the verdict is not in the schema's shape: /, '') : 'read';
  };
  const rows: [string, unknown, string][] = [
    ['not an object', [1], '(root): must be an object'],
    ['null', null, '(root): must be an object'],
    [
      'a key missing, one extra',
      { ...aVerdict(), summary: undefined, extra: 1 },
      'extra: is not a key of a verdict; summary: is missing',
    ],
    ['round as a string', aVerdict({ round: '1' as unknown as number }), 'round: must be a whole number from 1 to 100'],
    ['round 0', aVerdict({ round: 0 }), 'round: must be a whole number from 1 to 100'],
    [
      'an unknown verdict',
      aVerdict({ verdict: 'lgtm' as 'approve' }),
      'verdict: must be one of approve, changes_requested',
    ],
    ['a short SHA', aVerdict({ candidate: 'abc123' }), 'candidate: "abc123" does not match ^[0-9a-f]{40}$'],
    [
      'met as a string, evidence not a citation',
      aVerdict({ criteria: [{ ...met(1), met: 'yes' as unknown as boolean, evidence: ['somewhere'] }] }),
      'criteria[0].met: must be true or false; criteria[0].evidence[0]: "somewhere" does not match ^.+:[1-9][0-9]*$',
    ],
    [
      'a finding of an unknown severity and an extra key',
      aVerdict({ findings: [{ ...aFinding(), severity: 'critical' as 'major', line: 3 } as never] }),
      'findings[0].line: is not a key of a verdict; findings[0].severity: must be one of blocker, major, minor, nit',
    ],
    [
      'a location that is not path:line',
      aVerdict({ findings: [aFinding({ location: 'src/cli.ts' })] }),
      'findings[0].location: "src/cli.ts" does not match ^(.+:[1-9][0-9]*)?$',
    ],
    ['a summary too long', aVerdict({ summary: 'x'.repeat(4001) }), 'summary: is longer than 4000 characters'],
    [
      'too many findings',
      aVerdict({ findings: Array.from({ length: 101 }, () => aFinding()) }),
      'findings: holds 101 items, at most 100',
    ],
    [
      'more than five problems: counted',
      { a: 1, b: 2, c: 3, d: 4, e: 5, f: 6 },
      'a: is not a key of a verdict; b: is not a key of a verdict; c: is not a key of a verdict; d: is not a key of a verdict; e: is not a key of a verdict; and 9 more',
    ],
  ];
  for (const [name, value, problem] of rows) t.equal(shape(value), problem, name);
});

t.test('no verdict, too large, not JSON', async (t) => {
  t.same(parseVerdictDoc(undefined), { problem: 'no verdict' });
  t.same(parseVerdictDoc(''), { problem: 'no verdict' });
  t.same(parseVerdictDoc('   \n'), { problem: 'no verdict' });
  t.match(
    parseVerdictDoc('```json\n{}\n```'),
    { problem: /^the verdict is not JSON \(/ },
    'a fenced answer is not JSON',
  );
  t.same(parseVerdictDoc('{"a": 1}  ', 5), { problem: 'the verdict is 10 bytes, more than the 5 allowed' });
  t.same(
    parseVerdictDoc('"é"', 3),
    { problem: 'the verdict is 4 bytes, more than the 3 allowed' },
    'bytes, not characters',
  );
  t.equal(MAX_VERDICT_BYTES, 256 * 1024);
  const big = JSON.stringify(aVerdict({ criteria: Array.from({ length: 100 }, (_, i) => met(i + 1)) }));
  t.notOk('problem' in parseVerdictDoc(big), 'a verdict with the most criteria fits the cap');
});
