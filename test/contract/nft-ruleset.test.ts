// The generated ruleset against the real nft: `nft -c` accepts it, and in a
// namespace of our own it loads, lists back identical, and reloads in place.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { egressRuleset, rulesetDifferences, uidRulesLoaded } from '../../backends/host/nftables.js';
import { applyRuleset, checkRuleset, listEgressTable } from '../../backends/host/apply-nft.js';
import { realPorts } from '../../src/io/real-ports.js';
import { aRepo } from '../helpers/host-fixtures.js';
import { systemTestMayRun } from '../helpers/system.js';
import { netns } from '../helpers/netns.js';
import { inNetns } from '../../backends/host/exec.js';
import { FailedError } from '../../src/errors.js';

const repos = [
  aRepo('alpha', {
    proxyPort: 700,
    runnerProxyPort: 702,
    loopbackPorts: [5432],
    broker: { port: 704, providers: {}, maxBodyBytes: 1024 },
  }),
  aRepo('beta', { proxyPort: 701, runnerProxyPort: 703, gateEgress: 'agent', loopbackPorts: [8080] }),
];
// alpha: all three identities (its gate reaches nothing), a broker its agent reaches; beta: runner and gate
// (gate_egress = "agent"), no agent yet.
const uids = new Map([
  ['alpha', { runner: 1001, agent: 1002, gate: 1003 }],
  ['beta', { runner: 1004, gate: 1006 }],
]);
const ports = realPorts();

t.test('nft -c accepts the ruleset (as root, or in a user namespace)', async (t) => {
  const haveNft = spawnSync('sh', ['-c', 'command -v nft'], { stdio: 'ignore' }).status === 0;
  if (!haveNft) {
    systemTestMayRun(t, ['nft']);
    return;
  }
  // Without root, unshare -rn gives nft the capabilities it wants to check.
  const wrap =
    process.getuid?.() === 0
      ? undefined
      : (command: import('../../src/types.js').Command) => ({
          ...command,
          program: 'unshare',
          args: ['-rn', command.program, ...command.args],
        });
  t.equal(await checkRuleset({ ...ports, ...(wrap ? { wrap } : {}) }, egressRuleset(repos, uids)), undefined);
});

t.test('in a namespace: loads, lists back equal, re-applies in place, refuses garbage', async (t) => {
  if (!systemTestMayRun(t, ['ip', 'nft'])) return;
  const ns = netns(t);
  const deps = { ...ports, wrap: inNetns(ns.name) };
  const ruleset = egressRuleset(repos, uids);
  await applyRuleset(deps, ruleset);
  t.same(rulesetDifferences(await listEgressTable(deps), ruleset), []);
  const changed = egressRuleset([repos[0]!], uids);
  await applyRuleset(deps, changed);
  t.same(
    rulesetDifferences(await listEgressTable(deps), changed),
    [],
    'the second apply replaced the table, no duplicates',
  );
  const broken = {
    nftables: [
      ...changed.nftables,
      { add: { rule: { family: 'inet', table: 'agent_runner', chain: 'nope', expr: [{ accept: null }] } } },
    ],
  };
  await t.rejects(applyRuleset(deps, broken), FailedError);
  t.same(rulesetDifferences(await listEgressTable(deps), changed), [], 'a refused batch left the previous table');
  t.equal(ns.exec(['nft', 'list', 'tables']).stdout, 'table inet agent_runner\n');
});

t.test("in a namespace: each identity's rules list back as generated", async (t) => {
  if (!systemTestMayRun(t, ['ip', 'nft'])) return;
  const ns = netns(t);
  const deps = { ...ports, wrap: inNetns(ns.name) };
  const ruleset = egressRuleset(repos, uids);
  await applyRuleset(deps, ruleset);
  const live = await listEgressTable(deps);
  for (const uid of [1001, 1002, 1003, 1004, 1006]) t.ok(uidRulesLoaded(live, ruleset, uid), `uid ${uid}`);
  const text = ns.exec(['nft', 'list', 'table', 'inet', 'agent_runner']).stdout;
  t.match(text, /meta skuid 1001 ip daddr 127\.0\.0\.1 tcp dport 702 accept/, 'the runner: its git proxy');
  t.match(
    text,
    /meta skuid 1002 ip daddr 127\.0\.0\.1 tcp dport \{ 700, 704, 5432 \} accept/,
    'the agent: proxy, broker and loopback',
  );
  t.notMatch(text, /meta skuid 1003 .*accept/, "alpha's gate: no accept at all");
  t.match(text, /meta skuid 1003 meta l4proto tcp .*reject with tcp reset/, "alpha's gate: rejected");
  t.match(text, /meta skuid 1006 ip daddr 127\.0\.0\.1 tcp dport \{ 701, 8080 \} accept/, 'gate_egress = "agent"');
});
