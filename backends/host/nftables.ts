// The egress lock as data: a libnftables JSON batch for table
// `inet agent_runner`. Pure: repos and the uids of their identities (runner,
// agent, gate) in, ruleset out. What each identity may reach is
// control/registry/egress.ts.
//
// Platform limits: nft 1.0.6 has no `destroy`, so the batch starts with
// add table / delete table / add table, which makes it re-runnable and
// atomic (the kernel applies the whole batch or none of it). Matching is by
// socket owner (meta skuid): only locally generated packets of a repo user's
// processes are touched; every other uid passes (policy accept).
import type { RegistryRepo } from '../../src/types.js';
import { UsageError } from '../../src/errors.js';
import { identityNames, type Identity } from '../../src/identities.js';
import { gateEgressOf, proxyPortsOf } from '../../src/control/registry/egress.js';

export const EGRESS_TABLE = 'agent_runner';
export const EGRESS_FAMILY = 'inet';

export interface EgressOptions {
  /** Table name; tests keep the default inside their own namespace. */
  readonly table?: string;
  /** Where the proxies listen. Agents are pointed at this exact address. */
  readonly proxyAddress?: string;
}

export type NftObject = Record<string, unknown>;
export interface NftRuleset {
  readonly nftables: readonly NftObject[];
}

const match = (left: unknown, right: unknown): NftObject => ({ match: { op: '==', left, right } });
const skuid = (uid: number): NftObject => match({ meta: { key: 'skuid' } }, uid);
const ipField = (field: 'saddr' | 'daddr', address: string): NftObject =>
  match({ payload: { protocol: 'ip', field } }, address);
const tcpPorts = (field: 'sport' | 'dport', ports: readonly number[]): NftObject =>
  match({ payload: { protocol: 'tcp', field } }, ports.length === 1 ? ports[0] : { set: [...ports] });

// nft limits comments to 128 bytes.
const comment = (text: string): string => (text.length <= 128 ? text : `${text.slice(0, 125)}...`);

/** The uids of a repo's identities that exist; an identity whose user does not exist yet is absent. */
export type RepoUids = Partial<Readonly<Record<Identity, number>>>;

const IDENTITIES: readonly Identity[] = ['runner', 'agent', 'gate'];

/** The per-repo uid sets from the uids of the users that exist, by name. */
export function repoUids(
  repos: readonly RegistryRepo[],
  byUser: ReadonlyMap<string, number>,
): ReadonlyMap<string, RepoUids> {
  const sets = new Map<string, RepoUids>();
  for (const repo of repos) {
    const names = identityNames(repo.user);
    const set: Partial<Record<Identity, number>> = {};
    for (const identity of IDENTITIES) {
      const uid = byUser.get(names[identity]);
      if (uid !== undefined) set[identity] = uid;
    }
    sets.set(repo.name, set);
  }
  return sets;
}

/** The users of each repo that the ruleset leaves out because they do not exist yet, one line each. */
export function leftOutIdentities(repos: readonly RegistryRepo[], uids: ReadonlyMap<string, RepoUids>): string[] {
  return [...repos]
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((repo) =>
      IDENTITIES.filter((identity) => uids.get(repo.name)?.[identity] === undefined).map(
        (identity) => `repo ${repo.name}: no user ${identityNames(repo.user)[identity]} (${identity}) yet`,
      ),
    );
}

/**
 * Where one identity of a repo may open TCP on the proxy address: its proxy port (or none), and for the agent of a repo
 * with a broker its broker port (the broker listens on 127.0.0.1 beside the proxies).
 */
export function identityEgress(
  repo: RegistryRepo,
  identity: Identity,
): { ports: number[]; broker: number[]; loopback: number[] } {
  if (identity === 'runner') return { ports: proxyPortsOf(repo).slice(1), broker: [], loopback: [] };
  if (identity === 'gate' && gateEgressOf(repo) === 'none') return { ports: [], broker: [], loopback: [] };
  // The gate runs no model session: only the agent reaches the broker, whatever gate_egress says.
  const broker = identity === 'agent' && repo.broker !== undefined ? [repo.broker.port] : [];
  const loopback = [...new Set(repo.loopbackPorts)]
    .filter((port) => port !== repo.proxyPort && !broker.includes(port))
    .sort((a, b) => a - b);
  return { ports: [repo.proxyPort], broker, loopback };
}

/** "127.0.0.1:701 only", "127.0.0.1:700, its broker 127.0.0.1:702 and loopback ports 5432 only", or "nothing". */
export function describeIdentityEgress(repo: RegistryRepo, identity: Identity, proxyAddress = '127.0.0.1'): string {
  const { ports, broker, loopback } = identityEgress(repo, identity);
  if (!ports.length) return 'nothing';
  return `TCP ${proxyAddress}:${ports[0]}${reachesAlso(broker, loopback, proxyAddress)} only`;
}

/** ", its broker 127.0.0.1:702 and loopback ports 5432": what an identity reaches beside its proxy. */
function reachesAlso(broker: readonly number[], loopback: readonly number[], proxyAddress: string): string {
  const parts = [
    ...broker.map((port) => `its broker ${proxyAddress}:${port}`),
    ...(loopback.length ? [`loopback ports ${loopback.join(',')}`] : []),
  ];
  if (!parts.length) return '';
  return parts.length === 1 ? ` and ${parts[0]}` : `, ${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}

/**
 * The ruleset for these repos. Each identity of a repo may open TCP to its
 * own ports on the proxy address and nothing else: the runner its
 * runner_proxy_port, the agent its proxy_port, its broker_port (a repo with
 * a broker) and loopback_ports, the gate
 * nothing (or the agent's, with gate_egress = "agent"). Everything else they
 * send is rejected (TCP with a reset, the rest with icmpx admin-prohibited)
 * so a blocked connect fails in milliseconds instead of hanging. An identity
 * whose user has no uid yet is left out (leftOutIdentities says which): no
 * process can run as a user that does not exist, and provisioning
 * regenerates the ruleset after creating the user. A uid that is root or
 * plays two parts is refused: one rule set per uid is what keeps an agent
 * off the runner's port.
 */
export function egressRuleset(
  repos: readonly RegistryRepo[],
  uids: ReadonlyMap<string, RepoUids>,
  options: EgressOptions = {},
): NftRuleset {
  const table = options.table ?? EGRESS_TABLE;
  const proxyAddress = options.proxyAddress ?? '127.0.0.1';
  const base = { family: EGRESS_FAMILY, table };
  const rule = (text: string, expr: NftObject[]): NftObject => ({
    add: { rule: { ...base, chain: 'output', comment: comment(text), expr } },
  });

  const sorted = [...repos].sort((a, b) => a.name.localeCompare(b.name));
  const accepts: NftObject[] = [];
  const rejects: NftObject[] = [];
  const owners = new Map<number, string>();
  for (const repo of sorted) {
    const names = identityNames(repo.user);
    for (const identity of IDENTITIES) {
      const uid = uids.get(repo.name)?.[identity];
      if (uid === undefined) continue;
      const who = `${identity} ${names[identity]}`;
      if (uid === 0) {
        throw new UsageError(
          `registry: repos.${repo.name}.user: the ${who} is root (uid 0); locking root's egress would cut the host off. Give the repo its own user`,
        );
      }
      const other = owners.get(uid);
      if (other !== undefined) {
        throw new UsageError(
          `registry: repos.${repo.name}.user: the ${who} has uid ${uid}, which is also the ${other}; each identity needs a user of its own (agent-runner provision repo ${repo.name})`,
        );
      }
      owners.set(uid, `${who} of repo ${repo.name}`);
      const at = `repo ${repo.name}: ${who}`;
      const { ports, broker, loopback } = identityEgress(repo, identity);
      if (ports.length) {
        const what = identity === 'runner' ? 'its git proxy' : identity === 'gate' ? "the agent's proxy" : 'its proxy';
        accepts.push(
          rule(`${at} may reach ${what} ${proxyAddress}:${ports[0]}${reachesAlso(broker, loopback, proxyAddress)}`, [
            skuid(uid),
            ipField('daddr', proxyAddress),
            tcpPorts(
              'dport',
              [...ports, ...broker, ...loopback].sort((a, b) => a - b),
            ),
            { accept: null },
          ]),
        );
      }
      if (loopback.length) {
        // Replies of the identity's own servers on its loopback ports (a dev
        // server its tests talk to) leave from those ports.
        accepts.push(
          rule(`${at}: replies from its own loopback ports ${loopback.join(',')}`, [
            skuid(uid),
            ipField('saddr', '127.0.0.1'),
            ipField('daddr', '127.0.0.1'),
            tcpPorts('sport', loopback),
            { accept: null },
          ]),
        );
      }
      // The gate with no egress gets these two alone: nothing leaves, loopback included.
      rejects.push(
        rule(`${at}: reject any other tcp (reset)`, [
          skuid(uid),
          match({ meta: { key: 'l4proto' } }, 'tcp'),
          { reject: { type: 'tcp reset' } },
        ]),
        rule(`${at}: reject everything else (udp, dns, icmp, ipv6)`, [
          skuid(uid),
          { reject: { type: 'icmpx', expr: 'admin-prohibited' } },
        ]),
      );
    }
  }

  return {
    nftables: [
      { add: { table: { family: EGRESS_FAMILY, name: table } } },
      { delete: { table: { family: EGRESS_FAMILY, name: table } } },
      { add: { table: { family: EGRESS_FAMILY, name: table } } },
      { add: { chain: { ...base, name: 'output', type: 'filter', hook: 'output', prio: 0, policy: 'accept' } } },
      ...accepts,
      // After every accept: a uid's reject can never shadow another's accept.
      ...rejects,
    ],
  };
}

/** The ruleset as the file nft reads and egress.json stores. */
export function renderRuleset(ruleset: NftRuleset): string {
  return `${JSON.stringify(ruleset, null, 2)}\n`;
}

/** JSON with object keys sorted at every level, so equal data prints equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonical(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** Chains and rules of a table, without handles: the part two listings must share. */
function tableShape(objects: readonly NftObject[], table: string): string[] {
  const shape: string[] = [];
  for (const object of objects) {
    for (const kind of ['chain', 'rule'] as const) {
      const body = object[kind] as Record<string, unknown> | undefined;
      if (!body || body.table !== table) continue;
      const { handle: _handle, ...rest } = body;
      shape.push(`${kind} ${canonical(rest)}`);
    }
  }
  return shape;
}

/**
 * How the live table (the parsed output of `nft -j list table`) differs from
 * the generated ruleset; [] when they match rule for rule.
 */
export function rulesetDifferences(live: unknown, expected: NftRuleset, options: EgressOptions = {}): string[] {
  const table = options.table ?? EGRESS_TABLE;
  const liveObjects = (live as { nftables?: NftObject[] } | undefined)?.nftables;
  if (!Array.isArray(liveObjects)) return [`table ${EGRESS_FAMILY} ${table} is not loaded`];
  const expectedObjects = expected.nftables
    .map((command) => (command.add as NftObject | undefined) ?? {})
    .filter((object) => object.chain || object.rule);
  const want = tableShape(expectedObjects, table);
  const have = tableShape(liveObjects, table);
  const differences: string[] = [];
  const describe = (line: string) => {
    const found = line.match(/"comment":"([^"]*)"/);
    return found ? `"${found[1]}"` : line.slice(0, 80);
  };
  for (let index = 0; index < Math.max(want.length, have.length); index += 1) {
    const w = want[index];
    const h = have[index];
    if (w === h) continue;
    if (h === undefined) differences.push(`missing rule ${describe(w!)}`);
    else if (w === undefined) differences.push(`unexpected rule ${describe(h)}`);
    else differences.push(`rule ${index + 1} differs: expected ${describe(w)}, live ${describe(h)}`);
  }
  return differences;
}

/** Rules whose first match is `meta skuid == uid`. */
function rulesOfUid(objects: readonly NftObject[], uid: number): NftObject[] {
  return objects.filter((object) => {
    const first = ((object.rule as { expr?: unknown[] } | undefined)?.expr ?? [])[0] as
      { match?: { left?: { meta?: { key?: string } }; right?: unknown } } | undefined;
    return first?.match?.left?.meta?.key === 'skuid' && first.match.right === uid;
  });
}

/** Whether the live table holds exactly the rules the ruleset has for this uid, in their order. */
export function uidRulesLoaded(live: unknown, expected: NftRuleset, uid: number, options: EgressOptions = {}): boolean {
  const table = options.table ?? EGRESS_TABLE;
  const liveObjects = (live as { nftables?: NftObject[] } | undefined)?.nftables;
  if (!Array.isArray(liveObjects)) return false;
  const expectedObjects = expected.nftables.map((command) => (command.add as NftObject | undefined) ?? {});
  const want = tableShape(rulesOfUid(expectedObjects, uid), table);
  const have = tableShape(rulesOfUid(liveObjects, uid), table);
  return want.length > 0 && want.join('\n') === have.join('\n');
}
