// The GitHub push webhook's two keys, host-wide in [defaults]: where the
// receiver listens (a privileged port on 127.0.0.1, behind the operator's
// reverse proxy) and the root-owned file that holds its secret. The
// registry names the file, never the secret: registry.toml is read by every
// root command and printed in problems. Pure.
import * as path from 'node:path';
import type { RegistryRepo, RegistryWebhook } from '../../types.js';
import { PRIVILEGED_PORT_LIMIT, PROXY_PORTS_BELOW_KEY, REPO_PORT_KINDS } from './proxy-ports.js';

/** A port below the provision pool (700 up): provision never hands it to a repo. */
export const SUGGESTED_WEBHOOK_PORT = 690;

type Bad = (problem: string, fix: string) => void;

/** webhook_port: privileged, so no agent can bind it while the receiver is down and read other repos' pushes. */
export function readWebhookPort(value: unknown, below: number, bad: Bad, set: (port: number) => void): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value >= below) {
    const raised = below === PRIVILEGED_PORT_LIMIT ? '' : ` (${PROXY_PORTS_BELOW_KEY} = ${below})`;
    bad(
      `must be a privileged port 1-${below - 1}${raised}, got ${JSON.stringify(value)}: any user, an agent too, could bind a port from ${below} up while the receiver is down and read every repo's pushes`,
      `e.g. webhook_port = ${SUGGESTED_WEBHOOK_PORT} (below the ports provision hands out, 700 up), and point the reverse proxy at 127.0.0.1:${SUGGESTED_WEBHOOK_PORT}`,
    );
  } else set(value);
}

/** webhook_secret_file: an absolute path; the file itself (owner, mode, no link) is checked as the receiver starts. */
export function readWebhookSecretFile(value: unknown, bad: Bad, set: (file: string) => void): void {
  if (typeof value !== 'string' || !path.isAbsolute(value) || value.includes('\n'))
    bad(
      `must be the absolute path of the file holding the secret, got ${typeof value === 'string' ? 'a value that is not an absolute path' : JSON.stringify(value)}`,
      'put the secret in a root-owned file of mode 0600, e.g. /etc/agent-runner/webhook-secret, and write webhook_secret_file = "/etc/agent-runner/webhook-secret" (never the secret itself)',
    );
  else set(path.normalize(value));
}

export interface WebhookProblem {
  readonly key: 'webhook_port' | 'webhook_secret_file';
  readonly problem: string;
  readonly fix: string;
}

/** Both keys or neither: a receiver without a secret would wake watchers for anyone who can reach it. */
export function resolveWebhook(
  port: number | undefined,
  secretFile: string | undefined,
): { readonly webhook?: RegistryWebhook; readonly problem?: WebhookProblem } {
  if (port !== undefined && secretFile !== undefined) return { webhook: { port, secretFile } };
  if (port !== undefined)
    return {
      problem: {
        key: 'webhook_port',
        problem: 'is set without webhook_secret_file: the receiver verifies every delivery with the secret',
        fix: 'add webhook_secret_file = "/etc/agent-runner/webhook-secret" to [defaults] (the secret GitHub signs with)',
      },
    };
  if (secretFile !== undefined)
    return {
      problem: {
        key: 'webhook_secret_file',
        problem: 'is set without webhook_port: the receiver has nowhere to listen',
        fix: `add webhook_port = ${SUGGESTED_WEBHOOK_PORT} to [defaults], or remove webhook_secret_file`,
      },
    };
  return {};
}

/** The webhook port is none of the repos' proxy, runner proxy or broker ports. */
export function webhookPortClash(port: number, repos: readonly RegistryRepo[]): WebhookProblem | undefined {
  for (const repo of repos) {
    const kind = REPO_PORT_KINDS.find((candidate) => candidate.pick(repo) === port);
    if (kind)
      return {
        key: 'webhook_port',
        problem: `port ${port} is already repo "${repo.name}"'s ${kind.key}`,
        fix: `give the receiver a port of its own, e.g. webhook_port = ${SUGGESTED_WEBHOOK_PORT}`,
      };
  }
  return undefined;
}
