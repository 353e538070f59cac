// The egress lock as data: a libnftables JSON batch for table
// `inet agent_runner`. Pure: repos and their users' uids in, ruleset out.
//
// Platform limits: nft 1.0.6 has no `destroy`, so the batch starts with
// add table / delete table / add table, which makes it re-runnable and
// atomic (the kernel applies the whole batch or none of it). Matching is by
// socket owner (meta skuid): only locally generated packets of a repo user's
// processes are touched; every other uid passes (policy accept).
import type { RegistryRepo } from '../../src/types.js';
import { UsageError } from '../../src/errors.js';

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

interface UidGroup {
  readonly uid: number;
  readonly repos: string[];
}

/**
 * The ruleset for these repos. Every repo user may open TCP to its own proxy
 * port (and its registry loopback_ports) on the proxy address; everything
 * else it sends is rejected (TCP with a reset, the rest with icmpx
 * admin-prohibited) so a blocked connect fails in milliseconds instead of
 * hanging. A repo whose user has no uid yet is left out: no process can run
 * as a user that does not exist, and provisioning regenerates the ruleset
 * after creating the user.
 */
export function egressRuleset(
  repos: readonly RegistryRepo[],
  uids: ReadonlyMap<string, number>,
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
  const groups = new Map<number, UidGroup>();
  for (const repo of sorted) {
    const uid = uids.get(repo.user);
    if (uid === undefined) continue;
    if (uid === 0) {
      throw new UsageError(
        `registry: repos.${repo.name}.user: "${repo.user}" is root (uid 0); locking root's egress would cut the host off. Give the repo its own user`,
      );
    }
    const loopback = [...new Set(repo.loopbackPorts)].filter((port) => port !== repo.proxyPort).sort((a, b) => a - b);
    const allowed = [repo.proxyPort, ...loopback].sort((a, b) => a - b);
    accepts.push(
      rule(
        `repo ${repo.name}: ${repo.user} may reach its proxy ${proxyAddress}:${repo.proxyPort}${loopback.length ? ` and loopback ports ${loopback.join(',')}` : ''}`,
        [skuid(uid), ipField('daddr', proxyAddress), tcpPorts('dport', allowed), { accept: null }],
      ),
    );
    if (loopback.length) {
      // Replies of the user's own servers on its loopback ports (a dev
      // server its tests talk to) leave from those ports.
      accepts.push(
        rule(`repo ${repo.name}: replies from its own loopback ports ${loopback.join(',')}`, [
          skuid(uid),
          ipField('saddr', '127.0.0.1'),
          ipField('daddr', '127.0.0.1'),
          tcpPorts('sport', loopback),
          { accept: null },
        ]),
      );
    }
    const group = groups.get(uid) ?? { uid, repos: [] };
    group.repos.push(repo.name);
    groups.set(uid, group);
  }

  // Rejects come after every accept, so a user shared by two repos keeps
  // both of its proxy ports.
  const rejects: NftObject[] = [];
  for (const group of [...groups.values()].sort((a, b) => a.uid - b.uid)) {
    const names = group.repos.join(', ');
    rejects.push(
      rule(`repo ${names}: reject any other tcp (reset)`, [
        skuid(group.uid),
        match({ meta: { key: 'l4proto' } }, 'tcp'),
        { reject: { type: 'tcp reset' } },
      ]),
    );
    rejects.push(
      rule(`repo ${names}: reject everything else (udp, dns, icmp, ipv6)`, [
        skuid(group.uid),
        { reject: { type: 'icmpx', expr: 'admin-prohibited' } },
      ]),
    );
  }

  return {
    nftables: [
      { add: { table: { family: EGRESS_FAMILY, name: table } } },
      { delete: { table: { family: EGRESS_FAMILY, name: table } } },
      { add: { table: { family: EGRESS_FAMILY, name: table } } },
      { add: { chain: { ...base, name: 'output', type: 'filter', hook: 'output', prio: 0, policy: 'accept' } } },
      ...accepts,
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
