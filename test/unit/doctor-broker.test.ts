// doctor's model report over builder facts: the summary line for a repo with
// and without a broker, the broker account, and every key-file problem of the
// broker's own rule with its fix.
import t from 'tap';
import { brokerReport, modelAccessSummary, NO_BROKER_SUMMARY } from '../../backends/host/doctor-broker.js';
import type { KeyFileRead } from '../../src/broker/types.js';
import type { RepoBroker } from '../../src/types.js';
import { aRepo } from '../helpers/host-fixtures.js';

const KEY = '/etc/agent-runner/keys/web-anthropic';
const OPENAI = '/etc/agent-runner/keys/web-openai';
const broker: RepoBroker = {
  port: 702,
  providers: {
    anthropic: { origin: 'https://api.anthropic.com', keyFile: KEY, keyKind: 'subscription-token' },
    openai: { origin: 'https://api.openai.com', keyFile: OPENAI, keyKind: 'api-key' },
  },
  maxBodyBytes: 1024,
};
const web = aRepo('web', { broker });
const good = (overrides: Partial<Extract<KeyFileRead, { kind: 'opened' }>> = {}): KeyFileRead => ({
  kind: 'opened',
  isFile: true,
  mode: 0o100600,
  uid: 998,
  links: 1,
  size: 20,
  text: 'sk-ant-oat01-abcdefgh\n',
  ...overrides,
});
const files = (anthropic: KeyFileRead, openai: KeyFileRead = good()) =>
  new Map([
    [KEY, anthropic],
    [OPENAI, openai],
  ]);
const line = (check: { name: string; ok: boolean; detail: string; fix: string }) =>
  `${check.ok ? 'ok' : 'FAIL'} ${check.name}: ${check.detail}${check.ok ? '' : ` | fix: ${check.fix}`}`;

t.test('the summary says how the agents reach their model', async (t) => {
  t.equal(modelAccessSummary(web), 'broker on 127.0.0.1:702: anthropic subscription-token, openai api-key');
  t.equal(modelAccessSummary(aRepo('own')), "no broker: agents use logins in the agent's home");
  const none = brokerReport(aRepo('own'), { accountUid: undefined, keyFiles: new Map() });
  t.same(none, {
    model: { summary: NO_BROKER_SUMMARY, broker: null },
    checks: [{ name: 'model access', ok: true, detail: NO_BROKER_SUMMARY, fix: '' }],
  });
});

t.test('a healthy broker: every check passes, and --json names each provider', async (t) => {
  const report = brokerReport(web, { accountUid: 998, keyFiles: files(good()) });
  t.same(report.checks.map(line), [
    'ok model access: broker on 127.0.0.1:702: anthropic subscription-token, openai api-key',
    'ok broker account exists: agent-runner-broker is uid 998',
    `ok anthropic key file is usable: ${KEY}: one subscription-token, mode 0600, owned by agent-runner-broker`,
    `ok openai key file is usable: ${OPENAI}: one api-key, mode 0600, owned by agent-runner-broker`,
  ]);
  t.same(report.model, {
    summary: 'broker on 127.0.0.1:702: anthropic subscription-token, openai api-key',
    broker: {
      port: 702,
      account: 'agent-runner-broker',
      accountUid: 998,
      providers: [
        {
          provider: 'anthropic',
          keyKind: 'subscription-token',
          keyFile: KEY,
          origin: 'https://api.anthropic.com',
          keyFileOk: true,
        },
        { provider: 'openai', keyKind: 'api-key', keyFile: OPENAI, origin: 'https://api.openai.com', keyFileOk: true },
      ],
    },
  });
});

t.test('every key-file problem with its fix, and a missing account', async (t) => {
  const cases: [string, KeyFileRead, string][] = [
    [
      'missing',
      { kind: 'missing' },
      `FAIL anthropic key file is usable: the key file ${KEY} does not exist | fix: write the provider's key there (one line, mode 0600, owned by uid 998)`,
    ],
    [
      'a link',
      { kind: 'symlink' },
      `FAIL anthropic key file is usable: the key file ${KEY} is a symbolic link | fix: the broker reads a key only from a regular file (put the file itself there)`,
    ],
    [
      'open to the group',
      good({ mode: 0o100640 }),
      `FAIL anthropic key file is usable: the key file ${KEY} is readable or writable by group or others (mode 0640) | fix: run chmod 600 ${KEY}`,
    ],
    [
      "root's",
      good({ uid: 0 }),
      `FAIL anthropic key file is usable: the key file ${KEY} is owned by uid 0, not the broker's uid 998 | fix: chown agent-runner-broker: ${KEY}`,
    ],
    [
      'two links',
      good({ links: 2 }),
      `FAIL anthropic key file is usable: the key file ${KEY} has 2 hard links | fix: keep the key in one file no other path reaches (copy it, remove the links)`,
    ],
    [
      'a directory',
      good({ isFile: false, text: undefined }),
      `FAIL anthropic key file is usable: the key file ${KEY} is not a regular file | fix: put the key alone (one line) in a regular file at ${KEY}, owned by agent-runner-broker, mode 0600`,
    ],
    [
      'two words',
      good({ text: 'sk-ant one two\n' }),
      `FAIL anthropic key file is usable: the key file ${KEY} holds something other than one key (8 to 4096 visible characters, no spaces, one line) | fix: put the key alone (one line) in a regular file at ${KEY}, owned by agent-runner-broker, mode 0600`,
    ],
  ];
  for (const [name, read, want] of cases) {
    const report = brokerReport(web, { accountUid: 998, keyFiles: files(read) });
    t.equal(line(report.checks[2]!), want, name);
    t.match(report.model.broker?.providers[0], { keyFileOk: false, problem: /^the key file / }, `${name}: --json`);
    t.equal(report.checks[3]!.ok, true, `${name}: the other provider is judged on its own`);
  }
  const noAccount = brokerReport(web, { accountUid: undefined, keyFiles: files(good({ uid: 0 })) });
  t.equal(
    line(noAccount.checks[1]!),
    'FAIL broker account exists: no user agent-runner-broker: the broker has no identity to run as and the key files no owner | fix: agent-runner provision host (it creates the account)',
  );
  t.ok(noAccount.checks[2]!.ok, 'without the account the other rules still judge the file');
  t.equal(noAccount.model.broker?.accountUid, null);
  const unread = brokerReport(web, { accountUid: 998, keyFiles: undefined });
  t.same(
    unread.checks.slice(2).map((check) => check.ok),
    [false, false],
    'no reader: not passed silently',
  );
});
