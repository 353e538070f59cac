// agent-runner webhook serve: root's receiver of GitHub's push webhook, on
// 127.0.0.1 at the registry's webhook_port, behind the operator's reverse
// proxy. One process for the host, apart from the watchers (systemd runs a
// watcher per repo): it holds no lock, runs no git and starts nothing, so it
// can be restarted, or be down, without touching a run; a push it wakes a
// watcher for is checked by that watcher as its poll would. One event per
// line on stderr (the journal). Runs until SIGTERM.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { configValueError, EXIT, UsageError } from '../errors.js';
import { loadRegistry, requireRoot } from './root-support.js';
import { readWebhookSecret, WebhookReceiver } from '../control/pickup/index.js';
import { SUGGESTED_WEBHOOK_PORT } from '../control/registry/webhook.js';

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .command('serve')
    .description("receive GitHub's push webhook on 127.0.0.1:webhook_port until SIGTERM")
    .action(async () => {
      setExit(await serve(context));
    });
}

async function serve(context: CliContext): Promise<number> {
  requireRoot(context, 'webhook serve', "it reads the registry and writes the repos' wake files in root's state dir");
  const { registry, registryFile, state } = await loadRegistry(context);
  if (!registry.webhook)
    throw new UsageError(
      configValueError(
        registryFile,
        'defaults.webhook_port',
        'is not set: the receiver has no port and no secret',
        `add webhook_port = ${SUGGESTED_WEBHOOK_PORT} and webhook_secret_file = "/etc/agent-runner/webhook-secret" to [defaults] (docs/operations.md, "Pickup in seconds: the GitHub push webhook")`,
      ),
    );
  if (!context.listenWebhook) throw new UsageError('no webhook listener is wired into this agent-runner');
  const secret = await readWebhookSecret(context.ports.fs, registry.webhook.secretFile, registryFile);
  const { clock } = context.ports;
  const log = (event: string, fields: Record<string, unknown> = {}) =>
    context.err(`${JSON.stringify({ time: new Date(clock.now()).toISOString(), event, ...fields })}\n`);
  const receiver = new WebhookReceiver(context.ports, { registryFile, state, secret, log });
  let listener;
  try {
    listener = await context.listenWebhook(receiver, { port: registry.webhook.port });
  } catch (error) {
    throw new UsageError(
      configValueError(
        registryFile,
        'defaults.webhook_port',
        `cannot listen on 127.0.0.1:${registry.webhook.port} (${(error as Error).message})`,
        'stop what holds the port (ss -ltnp), or give the receiver another webhook_port and point the reverse proxy at it',
      ),
    );
  }
  log('webhook-listening', { host: listener.host, port: listener.port, maxBodyBytes: receiver.maxBodyBytes });
  if (!context.terminate.aborted)
    await new Promise<void>((resolve) => context.terminate.addEventListener('abort', () => resolve(), { once: true }));
  await listener.close();
  log('webhook-stopped');
  return EXIT.ok;
}
