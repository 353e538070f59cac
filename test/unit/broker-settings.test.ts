// The broker's settings and its key files: what may be used, and what the operator is told otherwise; the peer
// lookup's reading of /proc/net/tcp.
import t from 'tap';
import { keyFromFile } from '../../src/broker/key.js';
import { brokerRepoProblems, originProblem, type BrokerRepo } from '../../src/broker/config.js';
import { peerUidFrom, procAddress } from '../../src/broker/peer.js';
import { credentialHeaders, errorBody } from '../../src/broker/providers.js';
import type { KeyFileRead } from '../../src/broker/types.js';

const PATH = '/etc/agent-runner/keys/anthropic';
const file = (fields: Partial<Extract<KeyFileRead, { kind: 'opened' }>> = {}): KeyFileRead => ({
  kind: 'opened',
  isFile: true,
  mode: 0o100600,
  uid: 0,
  links: 1,
  size: 40,
  text: 'sk-ant-api03-REALKEY-0123456789\n',
  ...fields,
});

t.test('a key file that may be used, and each one that may not', async (t) => {
  t.same(keyFromFile(PATH, file(), 0), { ok: true, key: 'sk-ant-api03-REALKEY-0123456789' });
  t.same(keyFromFile(PATH, file({ mode: 0o100400 }), 0), { ok: true, key: 'sk-ant-api03-REALKEY-0123456789' });
  const cases: readonly [string, KeyFileRead, RegExp][] = [
    ['missing', { kind: 'missing' }, /does not exist; write .* mode 0600, owned by uid 0/],
    ['a symbolic link', { kind: 'symlink' }, /is a symbolic link/],
    ['a directory', file({ isFile: false, text: undefined }), /not a regular file/],
    ['hard-linked', file({ links: 2 }), /has 2 hard links/],
    ['owned by another', file({ uid: 1001 }), /owned by uid 1001, not the broker's uid 0; chown/],
    ['group-readable', file({ mode: 0o100640 }), /group or others \(mode 0640\); run chmod 600 \/etc/],
    ['world-readable', file({ mode: 0o100604 }), /mode 0604/],
    ['too large', file({ size: 20_000, text: undefined }), /larger than 16384 bytes/],
    ['empty', file({ text: '\n' }), /is empty/],
    ['two words', file({ text: 'sk-ant-api03 x\n' }), /other than one key/],
    ['a control character', file({ text: 'sk-ant-api03-abc\u0007def' }), /other than one key/],
  ];
  for (const [name, read, problem] of cases) {
    const verdict = keyFromFile(PATH, read, 0);
    t.equal(verdict.ok, false, name);
    if (!verdict.ok) t.match(verdict.problem, new RegExp(`^the key file ${PATH} `), `${name}: names the file`);
    if (!verdict.ok) t.match(verdict.problem, problem, `${name}: says what and how to fix it`);
  }
});

t.test('how each key goes upstream', async (t) => {
  t.same(credentialHeaders('anthropic', 'api-key', 'K', 'x'), [['x-api-key', 'K']]);
  t.same(credentialHeaders('openai', 'api-key', 'K', undefined), [['authorization', 'Bearer K']]);
  t.same(credentialHeaders('anthropic', 'subscription-token', 'T', 'claude-code-20250219, oauth-2025-04-20'), [
    ['authorization', 'Bearer T'],
    ['anthropic-beta', 'claude-code-20250219,oauth-2025-04-20'],
  ]);
});

t.test('error bodies in each provider shape', async (t) => {
  t.same(JSON.parse(errorBody('anthropic', 401, 'no')), {
    type: 'error',
    error: { type: 'authentication_error', message: 'no' },
  });
  t.same(JSON.parse(errorBody('openai', 404, 'no')), {
    error: { message: 'no', type: 'invalid_request_error', param: null, code: null },
  });
  t.same(JSON.parse(errorBody('openai', 400, 'no', 'agent_runner_over_budget')), {
    error: { message: 'no', type: 'agent_runner_over_budget', param: null, code: 'agent_runner_over_budget' },
  });
  t.same(JSON.parse(errorBody(undefined, 400, 'no')), {
    type: 'error',
    error: { message: 'no', type: 'invalid_request_error', param: null, code: null },
  });
});

const repo = (fields: Partial<BrokerRepo> = {}): BrokerRepo => ({
  repo: 'web',
  providers: { anthropic: { origin: 'https://api.anthropic.com', keyFile: PATH, keyKind: 'api-key' } },
  maxBodyBytes: 32 * 1024 * 1024,
  brokerUid: 0,
  ...fields,
});

t.test('broker settings: every problem at once', async (t) => {
  t.same(brokerRepoProblems(repo()), []);
  const problems = brokerRepoProblems(
    repo({
      repo: '../x',
      providers: {
        anthropic: { origin: 'https://api.anthropic.com/v1', keyFile: 'keys/a', keyKind: 'api-key' },
        openai: { origin: 'https://api.openai.com', keyFile: '/k', keyKind: 'subscription-token' },
      },
      maxBodyBytes: 10,
    }),
  );
  t.equal(problems.length, 5, problems.join('\n'));
  t.match(problems.join('\n'), /repo name is malformed/);
  t.match(problems.join('\n'), /must be scheme:\/\/host\[:port\] and nothing more/);
  t.match(problems.join('\n'), /must be an absolute path/);
  t.match(problems.join('\n'), /openai key kind subscription-token is not one of api-key$/m);
  t.match(problems.join('\n'), /body cap 10/);
  t.match(brokerRepoProblems(repo({ providers: {} })).join(), /no provider has a key file/);
  t.equal(originProblem('http://127.0.0.1:8080', 'x'), undefined);
  t.match(originProblem('https://user:pw@api.anthropic.com', 'x') ?? '', /user or password/);
  t.match(originProblem('ftp://h', 'x') ?? '', /http:\/\/ or https:\/\//);
  t.match(originProblem('nonsense', 'x') ?? '', /not a URL/);
  t.match(originProblem('https://h/', 'x') ?? '', /nothing more/);
});

t.test("the peer's uid from /proc/net/tcp", async (t) => {
  t.equal(procAddress('127.0.0.1', 8080), '0100007F:1F90');
  t.equal(procAddress('::ffff:127.0.0.1', 700), '0100007F:02BC');
  t.equal(procAddress('::1', 700), undefined);
  t.equal(procAddress('300.0.0.1', 700), undefined);
  const table = [
    '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   0: 0100007F:02BC 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1001 1 0 100 0 0 10 0',
    '   1: 0100007F:02BC 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 1002 1 0 20 4 30 10 -1',
    '   2: 0100007F:D431 0100007F:02BC 01 00000000:00000000 00:00000000 00000000  1001        0 1003 1 0 20 4 30 10 -1',
    '',
  ].join('\n');
  const connection = { remoteAddress: '127.0.0.1', remotePort: 0xd431, localAddress: '127.0.0.1', localPort: 700 };
  t.equal(peerUidFrom(table, connection), 1001, 'the row whose local end is the peer');
  t.equal(peerUidFrom(table, { ...connection, remotePort: 1 }), undefined, 'no such connection');
});
