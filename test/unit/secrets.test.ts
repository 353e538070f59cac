// One secret-name rule: the redaction of an agent's environment and home
// files and the registry's refusal of secret-looking env entries all ask
// SECRET_NAME, so a name one of them treats as a secret the others do too.
import t from 'tap';
import { TOKEN_PREFIX, TOKEN_SHAPE, tokenFromBytes } from '../../src/broker/capabilities.js';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  extractSecrets,
  knownSecrets,
  redactDeep,
  redactor,
  redactSecrets,
  SECRET_NAME,
} from '../../src/agent/secrets.js';
import { repoUserSecrets } from '../../src/control/repo-user/home-secrets.js';
import { realFs } from '../../src/io/real-ports.js';
import { parseRegistry } from '../../src/control/registry/parse.js';
import { cronScheduler } from '../../src/io/cron.js';

const SECRET = [
  'GITHUB_TOKEN',
  'ANTHROPIC_API_KEY',
  'client_secret',
  'DB_PASSWORD',
  'MYSQL_PASSWD',
  'aws_credentials',
  'accessToken',
];
const PLAIN = ['PATH', 'HOME', 'PWD', 'GIT_AUTHOR_NAME', 'NODE_ENV', 'LOG', 'bypass'];
const noHome = { readTextIfExists: async () => undefined };

t.test('which names hold a secret', async (t) => {
  for (const name of SECRET) t.ok(SECRET_NAME.test(name), `${name} holds a secret`);
  for (const name of PLAIN) t.notOk(SECRET_NAME.test(name), `${name} does not`);
});

t.test('the environment: every secret-named value is known, the rest is not', async (t) => {
  const env = Object.fromEntries([...SECRET, ...PLAIN].map((name) => [name, `value-of-${name}`]));
  t.same((await knownSecrets(noHome, env)).sort(), SECRET.map((name) => `value-of-${name}`).sort());
});

t.test('home files: secret-named keys in JSON, broken JSON and key: value lines', async (t) => {
  for (const name of SECRET) {
    t.same(
      extractSecrets('.codex/auth.json', JSON.stringify({ [name]: 'json-secret-value', other: 'visible-value' })),
      ['json-secret-value'],
      `${name} in JSON`,
    );
    t.same(
      extractSecrets('.codex/auth.json', `{ ${name}: "broken-json-secret" `),
      ['broken-json-secret'],
      `${name} in broken JSON`,
    );
    t.same(
      extractSecrets('.config/gh/hosts.yml', `github.com:\n  ${name}: yaml-secret-value\n  user: visible-value\n`),
      ['yaml-secret-value'],
      `${name} in YAML`,
    );
  }
});

t.test('the registry refuses exactly the secret-named env entries', async (t) => {
  const table = [...SECRET, ...PLAIN].filter(
    (name) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && name !== 'PATH' && name !== 'HOME',
  );
  const text = `[repos.web]\npath = "/srv/web"\nproxy_port = 700\nenv = { ${table.map((name) => `${name} = "x"`).join(', ')} }\n`;
  const refused = parseRegistry(text, '/etc/agent-runner/registry.toml', cronScheduler).problems.filter((p) =>
    p.problem.includes('looks like a secret'),
  );
  t.same(
    refused.map((p) => p.key).sort(),
    SECRET.filter((name) => table.includes(name))
      .map((name) => `repos.web.env.${name}`)
      .sort(),
  );
});

t.test('redactDeep: every string of a structured sink, keys too, by the one rule', async (t) => {
  const secret = 'sk-live-0123456789';
  const value = {
    reason: `cannot use ${secret}`,
    tasks: [{ title: `x${secret}y`, n: 3, ok: true, none: null }],
    [secret]: 'key',
  };
  const redacted = redactDeep(value, [secret]);
  t.notMatch(JSON.stringify(redacted), secret);
  t.same(redacted, {
    reason: 'cannot use [redacted]',
    tasks: [{ title: 'x[redacted]y', n: 3, ok: true, none: null }],
    '[redacted]': 'key',
  });
  t.same(redactDeep(value, []), value, 'no secrets and no capability token: the same value');
  t.equal(redactor([secret])(`a ${secret}`), redactSecrets(`a ${secret}`, [secret]), 'the bound form is the same rule');
});

t.test('root reads a repo user home for its secrets without following links', async (t) => {
  const home = mkdtempSync(path.join(tmpdir(), 'agent-runner-home-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  writeFileSync(path.join(home, '.git-credentials'), 'https://bot:ghp_homeTokenValue1@github.com\n');
  mkdirSync(path.join(home, '.codex'));
  const elsewhere = path.join(home, 'elsewhere.json');
  writeFileSync(elsewhere, JSON.stringify({ api_key: 'linked-secret-value' }));
  symlinkSync(elsewhere, path.join(home, '.codex/auth.json'));
  t.same(await repoUserSecrets(realFs, home), ['ghp_homeTokenValue1'], 'the file is read; the link is not followed');
});

t.test('a capability token is redacted wherever it appears, known or not, by its shape', async (t) => {
  const token = tokenFromBytes(new Uint8Array(32).fill(7));
  const other = tokenFromBytes(Uint8Array.from({ length: 32 }, (_, i) => i * 5));
  t.ok(TOKEN_SHAPE.test(token) && TOKEN_SHAPE.test(other), 'real token shapes');
  const text = `Authorization: Bearer ${token}\n{"AGENT_RUNNER_BROKER_TOKEN":"${other}"} x${token}y`;
  const redacted = redactSecrets(text, []);
  t.equal(redacted, 'Authorization: Bearer [redacted]\n{"AGENT_RUNNER_BROKER_TOKEN":"[redacted]"} x[redacted]y');
  t.equal(
    redactSecrets(`${TOKEN_PREFIX}short and arcap_ alone`, []),
    `${TOKEN_PREFIX}short and arcap_ alone`,
    'not a token',
  );
  t.equal(
    redactSecrets(`git ghp_known1234 ${token}`, ['ghp_known1234']),
    'git [redacted] [redacted]',
    'beside known ones',
  );
  const event = { detail: `curl -H "Authorization: Bearer ${token}"`, nested: [{ [token]: other }], n: 1 };
  const deep = redactDeep(event, []);
  t.same(deep, {
    detail: 'curl -H "Authorization: Bearer [redacted]"',
    nested: [{ '[redacted]': '[redacted]' }],
    n: 1,
  });
  t.notOk(JSON.stringify(deep).includes(TOKEN_PREFIX), 'a sink given no secrets keeps no token either');
  t.equal(redactor([])(token), '[redacted]', 'the bound form too');
});
