// The egress ruleset for two repos, structure asserted exactly.
import t from 'tap';
import { egressRuleset, rulesetDifferences } from '../../backends/host/nftables.js';
import { aRepo } from '../helpers/host-fixtures.js';
import { UsageError } from '../../src/errors.js';

const skuid = (uid: number) => ({ match: { op: '==', left: { meta: { key: 'skuid' } }, right: uid } });
const T = { family: 'inet', table: 'agent_runner', chain: 'output' };

const alpha = aRepo('alpha', { proxyPort: 700, loopbackPorts: [5432, 700, 5432] });
const beta = aRepo('beta', { proxyPort: 701 });
const uids = new Map([
  ['agent-alpha', 1001],
  ['agent-beta', 1002],
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
          comment: 'repo alpha: agent-alpha may reach its proxy 127.0.0.1:700 and loopback ports 5432',
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
          comment: 'repo alpha: replies from its own loopback ports 5432',
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
          comment: 'repo beta: agent-beta may reach its proxy 127.0.0.1:701',
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
          comment: 'repo alpha: reject any other tcp (reset)',
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
          comment: 'repo alpha: reject everything else (udp, dns, icmp, ipv6)',
          expr: [skuid(1001), { reject: { type: 'icmpx', expr: 'admin-prohibited' } }],
        },
      },
    },
    {
      add: {
        rule: {
          ...T,
          comment: 'repo beta: reject any other tcp (reset)',
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
          comment: 'repo beta: reject everything else (udp, dns, icmp, ipv6)',
          expr: [skuid(1002), { reject: { type: 'icmpx', expr: 'admin-prohibited' } }],
        },
      },
    },
  ]);
});

t.test('a repo whose user does not exist yet is left out; root is refused', async (t) => {
  const ruleset = egressRuleset([alpha, beta], new Map([['agent-beta', 1002]]));
  t.same(
    ruleset.nftables
      .filter((entry) => entry.add !== undefined && 'rule' in (entry.add as object))
      .map((entry) => (entry.add as { rule: { comment: string } }).rule.comment),
    [
      'repo beta: agent-beta may reach its proxy 127.0.0.1:701',
      'repo beta: reject any other tcp (reset)',
      'repo beta: reject everything else (udp, dns, icmp, ipv6)',
    ],
  );
  t.throws(() => egressRuleset([alpha], new Map([['agent-alpha', 0]])), UsageError);
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
    'missing rule "repo beta: reject everything else (udp, dns, icmp, ipv6)"',
  ]);
  t.same(rulesetDifferences(undefined, ruleset), ['table inet agent_runner is not loaded']);
  const changed = egressRuleset([alpha, { ...beta, proxyPort: 799 }], uids);
  t.same(rulesetDifferences(listing, changed), [
    'rule 4 differs: expected "repo beta: agent-beta may reach its proxy 127.0.0.1:799", live "repo beta: agent-beta may reach its proxy 127.0.0.1:701"',
  ]);
});
