// The egress ruleset for two repos, structure asserted exactly, and the rules of each identity of a repo.
import t from 'tap';
import {
  egressRuleset,
  leftOutIdentities,
  repoUids,
  rulesetDifferences,
  uidRulesLoaded,
} from '../../backends/host/nftables.js';
import { aRepo } from '../helpers/host-fixtures.js';
import { UsageError } from '../../src/errors.js';

const skuid = (uid: number) => ({ match: { op: '==', left: { meta: { key: 'skuid' } }, right: uid } });
const T = { family: 'inet', table: 'agent_runner', chain: 'output' };

const alpha = aRepo('alpha', { proxyPort: 700, loopbackPorts: [5432, 700, 5432] });
const beta = aRepo('beta', { proxyPort: 701 });
const uids = new Map([
  ['alpha', { agent: 1001 }],
  ['beta', { agent: 1002 }],
]);

t.test('two repos: accepts first, then per-uid rejects', async (t) => {
  const ruleset = egressRuleset([beta, alpha], uids);
  t.same(ruleset.nftables, [
    { add: { table: { family: 'inet', name: 'agent_runner' } } },
    { delete: { table: { family: 'inet', name: 'agent_runner' } } },
    { add: { table: { family: 'inet', name: 'agent_runner' } } },
    {
      add: {
        chain: {
          family: 'inet',
          table: 'agent_runner',
          name: 'output',
          type: 'filter',
          hook: 'output',
          prio: 0,
          policy: 'accept',
        },
      },
    },
    {
      add: {
        rule: {
          ...T,
          comment: 'repo alpha: agent agent-alpha-agent may reach its proxy 127.0.0.1:700 and loopback ports 5432',
          expr: [
            skuid(1001),
            { match: { op: '==', left: { payload: { protocol: 'ip', field: 'daddr' } }, right: '127.0.0.1' } },
            {
              match: { op: '==', left: { payload: { protocol: 'tcp', field: 'dport' } }, right: { set: [700, 5432] } },
            },
            { accept: null },
          ],
        },
      },
    },
    {
      add: {
        rule: {
          ...T,
          comment: 'repo alpha: agent agent-alpha-agent: replies from its own loopback ports 5432',
          expr: [
            skuid(1001),
            { match: { op: '==', left: { payload: { protocol: 'ip', field: 'saddr' } }, right: '127.0.0.1' } },
            { match: { op: '==', left: { payload: { protocol: 'ip', field: 'daddr' } }, right: '127.0.0.1' } },
            { match: { op: '==', left: { payload: { protocol: 'tcp', field: 'sport' } }, right: 5432 } },
            { accept: null },
          ],
        },
      },
    },
    {
      add: {
        rule: {
          ...T,
          comment: 'repo beta: agent agent-beta-agent may reach its proxy 127.0.0.1:701',
          expr: [
            skuid(1002),
            { match: { op: '==', left: { payload: { protocol: 'ip', field: 'daddr' } }, right: '127.0.0.1' } },
            { match: { op: '==', left: { payload: { protocol: 'tcp', field: 'dport' } }, right: 701 } },
            { accept: null },
          ],
        },
      },
    },
    {
      add: {
        rule: {
          ...T,
          comment: 'repo alpha: agent agent-alpha-agent: reject any other tcp (reset)',
          expr: [
            skuid(1001),
            { match: { op: '==', left: { meta: { key: 'l4proto' } }, right: 'tcp' } },
            { reject: { type: 'tcp reset' } },
          ],
        },
      },
    },
    {
      add: {
        rule: {
          ...T,
          comment: 'repo alpha: agent agent-alpha-agent: reject everything else (udp, dns, icmp, ipv6)',
          expr: [skuid(1001), { reject: { type: 'icmpx', expr: 'admin-prohibited' } }],
        },
      },
    },
    {
      add: {
        rule: {
          ...T,
          comment: 'repo beta: agent agent-beta-agent: reject any other tcp (reset)',
          expr: [
            skuid(1002),
            { match: { op: '==', left: { meta: { key: 'l4proto' } }, right: 'tcp' } },
            { reject: { type: 'tcp reset' } },
          ],
        },
      },
    },
    {
      add: {
        rule: {
          ...T,
          comment: 'repo beta: agent agent-beta-agent: reject everything else (udp, dns, icmp, ipv6)',
          expr: [skuid(1002), { reject: { type: 'icmpx', expr: 'admin-prohibited' } }],
        },
      },
    },
  ]);
});

t.test('a repo whose user does not exist yet is left out, and said; root and a shared uid are refused', async (t) => {
  const ruleset = egressRuleset([alpha, beta], new Map([['beta', { agent: 1002 }]]));
  t.same(comments(ruleset), [
    'repo beta: agent agent-beta-agent may reach its proxy 127.0.0.1:701',
    'repo beta: agent agent-beta-agent: reject any other tcp (reset)',
    'repo beta: agent agent-beta-agent: reject everything else (udp, dns, icmp, ipv6)',
  ]);
  t.same(leftOutIdentities([alpha, beta], new Map([['beta', { agent: 1002 }]])), [
    'repo alpha: no user agent-alpha (runner) yet',
    'repo alpha: no user agent-alpha-agent (agent) yet',
    'repo alpha: no user agent-alpha-gate (gate) yet',
    'repo beta: no user agent-beta (runner) yet',
    'repo beta: no user agent-beta-gate (gate) yet',
  ]);
  t.throws(() => egressRuleset([alpha], new Map([['alpha', { agent: 0 }]])), UsageError);
  t.throws(
    () => egressRuleset([alpha], new Map([['alpha', { runner: 1001, agent: 1001 }]])),
    /the agent agent-alpha-agent has uid 1001, which is also the runner agent-alpha of repo alpha/,
    'an agent sharing the runner uid would get the git host',
  );
  t.throws(
    () =>
      egressRuleset(
        [alpha, beta],
        new Map([
          ['alpha', { gate: 1001 }],
          ['beta', { runner: 1001 }],
        ]),
      ),
    UsageError,
    'across repos too',
  );
});

const comments = (ruleset: ReturnType<typeof egressRuleset>) =>
  ruleset.nftables
    .filter((entry) => entry.add !== undefined && 'rule' in (entry.add as object))
    .map((entry) => (entry.add as { rule: { comment: string } }).rule.comment);
type Rule = { expr: { match?: { left: unknown; right: unknown } }[] };
const dports = (ruleset: ReturnType<typeof egressRuleset>, uid: number) =>
  ruleset.nftables
    .map((entry) => (entry.add as { rule?: Rule } | undefined)?.rule)
    .filter((rule): rule is Rule => rule?.expr[0]?.match?.right === uid)
    .flatMap((rule) => rule.expr.filter((e) => String(JSON.stringify(e.match?.left)).includes('"dport"')))
    .map((e) => e.match!.right);

t.test('three identities: the runner its git proxy, the agent its proxy, the gate nothing', async (t) => {
  const repo = aRepo('alpha', { proxyPort: 700, runnerProxyPort: 702, loopbackPorts: [5432] });
  const three = new Map([['alpha', { runner: 1001, agent: 1002, gate: 1003 }]]);
  const ruleset = egressRuleset([repo], three);
  t.same(comments(ruleset), [
    'repo alpha: runner agent-alpha may reach its git proxy 127.0.0.1:702',
    'repo alpha: agent agent-alpha-agent may reach its proxy 127.0.0.1:700 and loopback ports 5432',
    'repo alpha: agent agent-alpha-agent: replies from its own loopback ports 5432',
    'repo alpha: runner agent-alpha: reject any other tcp (reset)',
    'repo alpha: runner agent-alpha: reject everything else (udp, dns, icmp, ipv6)',
    'repo alpha: agent agent-alpha-agent: reject any other tcp (reset)',
    'repo alpha: agent agent-alpha-agent: reject everything else (udp, dns, icmp, ipv6)',
    'repo alpha: gate agent-alpha-gate: reject any other tcp (reset)',
    'repo alpha: gate agent-alpha-gate: reject everything else (udp, dns, icmp, ipv6)',
  ]);
  t.same(dports(ruleset, 1001), [702], 'the runner: its own port only, not the agent port');
  t.same(dports(ruleset, 1002), [{ set: [700, 5432] }], 'the agent: its port and loopback ports, not the runner port');
  t.same(dports(ruleset, 1003), [], 'the gate: no port at all, loopback neither');

  const open = egressRuleset([{ ...repo, gateEgress: 'agent' }], three);
  t.same(dports(open, 1003), [{ set: [700, 5432] }], 'gate_egress = "agent": what the agent reaches');
  t.ok(
    comments(open).includes(
      "repo alpha: gate agent-alpha-gate may reach the agent's proxy 127.0.0.1:700 and loopback ports 5432",
    ),
  );

  const unallocated = egressRuleset([{ ...repo, runnerProxyPort: undefined }], three);
  t.same(dports(unallocated, 1001), [], 'no runner_proxy_port yet: the runner reaches nothing');

  t.same(
    repoUids(
      [repo],
      new Map([
        ['agent-alpha', 1001],
        ['agent-alpha-gate', 1003],
        ['someone', 5],
      ]),
    ),
    new Map([['alpha', { runner: 1001, gate: 1003 }]]),
    'uids by user name become the per-repo set',
  );
});

t.test("each uid's rules, checked in a live listing", async (t) => {
  const repo = aRepo('alpha', { proxyPort: 700, runnerProxyPort: 702 });
  const three = new Map([['alpha', { runner: 1001, agent: 1002, gate: 1003 }]]);
  const ruleset = egressRuleset([repo], three);
  const listing = { nftables: ruleset.nftables.slice(3).map((entry) => entry.add as object) };
  for (const uid of [1001, 1002, 1003]) t.ok(uidRulesLoaded(listing, ruleset, uid), `uid ${uid}`);
  const withoutGate = { nftables: listing.nftables.filter((object) => !JSON.stringify(object).includes('1003')) };
  t.notOk(uidRulesLoaded(withoutGate, ruleset, 1003), "the gate's rules missing: not loaded");
  t.ok(uidRulesLoaded(withoutGate, ruleset, 1001), 'the others still are');
  t.notOk(uidRulesLoaded(undefined, ruleset, 1001), 'no table');
  t.notOk(
    uidRulesLoaded(listing, egressRuleset([{ ...repo, runnerProxyPort: 703 }], three), 1001),
    'a runner rule for another port',
  );
});

t.test('no repos: an empty chain, still a valid replace', async (t) => {
  t.equal(egressRuleset([], uids).nftables.length, 4);
});

t.test('comparing a live listing with the generated ruleset', async (t) => {
  const ruleset = egressRuleset([alpha, beta], uids);
  // What `nft -j list table` prints: metainfo, handles, objects without "add".
  const listing = {
    nftables: [
      { metainfo: { version: '1.0.6', json_schema_version: 1 } },
      { table: { family: 'inet', name: 'agent_runner', handle: 7 } },
      ...ruleset.nftables.slice(3).map((entry, index) => {
        const [kind, body] = Object.entries(entry.add as object)[0]!;
        return { [kind]: { ...(body as object), handle: index + 1 } };
      }),
    ],
  };
  t.same(rulesetDifferences(listing, ruleset), []);
  const withoutLast = { nftables: listing.nftables.slice(0, -1) };
  t.same(rulesetDifferences(withoutLast, ruleset), [
    'missing rule "repo beta: agent agent-beta-agent: reject everything else (udp, dns, icmp, ipv6)"',
  ]);
  t.same(rulesetDifferences(undefined, ruleset), ['table inet agent_runner is not loaded']);
  const changed = egressRuleset([alpha, { ...beta, proxyPort: 799 }], uids);
  t.same(rulesetDifferences(listing, changed), [
    'rule 4 differs: expected "repo beta: agent agent-beta-agent may reach its proxy 127.0.0.1:799", live "repo beta: agent agent-beta-agent may reach its proxy 127.0.0.1:701"',
  ]);
});

t.test('a repo with a broker: its agent reaches its broker port too, no other identity does', async (t) => {
  const broker = { port: 704, providers: {}, maxBodyBytes: 1024 };
  const repo = aRepo('alpha', { proxyPort: 700, runnerProxyPort: 702, loopbackPorts: [5432], broker });
  const other = aRepo('beta', { proxyPort: 701, broker: { ...broker, port: 705 } });
  const uids = new Map([
    ['alpha', { runner: 1001, agent: 1002, gate: 1003 }],
    ['beta', { agent: 1004 }],
  ]);
  const ruleset = egressRuleset([repo, { ...other, gateEgress: 'agent' }], uids);
  t.same(comments(ruleset).slice(0, 4), [
    'repo alpha: runner agent-alpha may reach its git proxy 127.0.0.1:702',
    'repo alpha: agent agent-alpha-agent may reach its proxy 127.0.0.1:700, its broker 127.0.0.1:704 and loopback ports 5432',
    'repo alpha: agent agent-alpha-agent: replies from its own loopback ports 5432',
    'repo beta: agent agent-beta-agent may reach its proxy 127.0.0.1:701 and its broker 127.0.0.1:705',
  ]);
  t.same(dports(ruleset, 1002), [{ set: [700, 704, 5432] }], 'the agent: its proxy, its broker, its loopback ports');
  t.same(dports(ruleset, 1004), [{ set: [701, 705] }], "the other repo's agent: its own broker, not alpha's");
  t.same(dports(ruleset, 1001), [702], 'the runner: never the broker');
  t.same(dports(ruleset, 1003), [], 'the gate: nothing');
  const open = egressRuleset([{ ...repo, gateEgress: 'agent' }], uids);
  t.same(dports(open, 1003), [{ set: [700, 5432] }], 'gate_egress = "agent": the proxy, still not the broker');
  t.same(
    dports(egressRuleset([{ ...repo, broker: undefined }], uids), 1002),
    [{ set: [700, 5432] }],
    'without a broker: as before',
  );
});
