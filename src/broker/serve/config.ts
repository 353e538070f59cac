// What root hands the broker process of one run, on its control channel's
// first line: the repo's providers and key files, the run, where to listen,
// whom to become once the port is bound, the broker's own egress, and the
// budget snapshot the run starts from. Checked whole, every problem at once,
// before anything listens. Pure.
import { parseSpendPolicy, type SpendPolicy } from '../../spend/policy.js';
import { brokerRepoProblems, originProblem, type BrokerRepo } from '../config.js';

export interface BrokerServeConfig {
  readonly repo: BrokerRepo;
  readonly run: string;
  /** Loopback only: the agents reach it there, nothing else can. */
  readonly host: '127.0.0.1';
  /** The repo's privileged broker_port; 0 (an ephemeral port) only where no privilege is dropped (the demo, tests). */
  readonly port: number;
  /** The broker identity to become once the port is bound (root starts the process); absent: stay who it is. */
  readonly dropTo?: { readonly uid: number; readonly gid: number };
  /** The broker's own egress proxy (http://127.0.0.1:PORT); absent: it reaches the provider directly. */
  readonly proxy?: string;
  readonly spend: SpendPolicy;
  /** Refuse a connection whose peer uid is not the grant's (/proc/net/tcp, IPv4 loopback). */
  readonly peerCheck: boolean;
}

/** A run id as root names a run to its broker (and the broker names it back in every usage record). */
export const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const isUid = (value: unknown) => Number.isSafeInteger(value) && (value as number) > 0;

/** Every problem of a config as it arrived (unknown JSON), or the config. */
export function readServeConfig(value: unknown): { config: BrokerServeConfig } | { problems: string[] } {
  if (typeof value !== 'object' || value === null) return { problems: ['the broker config is not an object'] };
  const config = value as BrokerServeConfig;
  const problems: string[] = [];
  if (typeof config.repo !== 'object' || config.repo === null) problems.push('repo is missing');
  else problems.push(...brokerRepoProblems(config.repo));
  if (typeof config.run !== 'string' || !RUN_ID.test(config.run)) problems.push('run is not a run id');
  if (config.host !== '127.0.0.1') problems.push('host must be 127.0.0.1');
  if (!Number.isSafeInteger(config.port) || config.port < 0 || config.port > 65535)
    problems.push(`port ${JSON.stringify(config.port)} is not a TCP port`);
  if (config.dropTo !== undefined) {
    if (!isUid(config.dropTo?.uid) || !isUid(config.dropTo?.gid))
      problems.push('dropTo must name a uid and gid other than root');
    else if (config.repo && config.dropTo.uid !== config.repo.brokerUid)
      problems.push(
        `dropTo uid ${config.dropTo.uid} is not the key files' owner (brokerUid ${config.repo.brokerUid}): the broker could not read its keys`,
      );
    if (config.port === 0) problems.push('a broker that drops to its identity listens on the repo broker_port, not 0');
  }
  if (config.proxy !== undefined) {
    const problem = typeof config.proxy === 'string' ? originProblem(config.proxy, 'proxy') : 'proxy is not text';
    if (problem) problems.push(problem);
  }
  const spend = parseSpendPolicy(JSON.stringify(config.spend ?? null));
  if (typeof spend === 'string') problems.push(`spend ${spend}`);
  if (typeof config.peerCheck !== 'boolean') problems.push('peerCheck is not true or false');
  return problems.length ? { problems } : { config: { ...config, spend: spend as SpendPolicy } };
}
