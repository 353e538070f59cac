// The generated ruleset against the real nft: `nft -c` accepts it, and in a
// namespace of our own it loads, lists back identical, and reloads in place.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { egressRuleset, rulesetDifferences } from '../../backends/host/nftables.js';
import { applyRuleset, checkRuleset, listEgressTable } from '../../backends/host/apply-nft.js';
import { realPorts } from '../../src/io/real-ports.js';
import { aRepo } from '../helpers/host-fixtures.js';
import { systemTestMayRun } from '../helpers/system.js';
import { netns } from '../helpers/netns.js';
import { inNetns } from '../../backends/host/exec.js';
import { FailedError } from '../../src/errors.js';

const repos = [aRepo('alpha', { proxyPort: 700, loopbackPorts: [5432] }), aRepo('beta', { proxyPort: 701 })];
const uids = new Map([
  ['alpha', { runner: 1001 }],
  ['beta', { runner: 1002 }],
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
