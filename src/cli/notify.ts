// agent-runner notify test --repo NAME | notify status [--repo NAME]: send one test event
// to each of a repo's webhooks now (not through the outbox, so the operator
// sees each answer), and list what waits in the outbox or was given up.
// Root only: the registry and the outbox hold the webhooks' URLs, which
// this command never prints past their host.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT, UsageError, configValueError } from '../errors.js';
import { loadRegistry, requireRoot } from './root-support.js';
import {
  REGISTERED_WORKSPACE_HELP,
  registeredTarget,
  repoOfTarget,
  resolveTarget,
  targetFlags,
  type Target,
} from './target.js';
import { withExamples } from './help.js';
import { Outbox, redactUrl, SEND_POLICY, sendOnce, TEST_EVENT_KIND, type Delivery } from '../control/notify/index.js';

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  type Flags = { repo?: string; workspace?: string; json?: boolean };
  withExamples(
    targetFlags(
      command
        .command('test')
        .description("send one test event to each of the repo's webhooks, now")
        .argument('[repo]', 'the same as --repo NAME'),
      REGISTERED_WORKSPACE_HELP,
    ),
    [['agent-runner notify test --repo web', "one test event to each of web's webhooks"]],
  )
    .option('--json', 'print the result as JSON')
    .action(async (positional: string | undefined, options: Flags) => {
      const target = resolveTarget('notify test', { ...options, positional }, { workspace: true, required: true });
      setExit(await sendTest(context, target, Boolean(options.json)));
    });
  withExamples(
    targetFlags(
      command
        .command('status')
        .description('deliveries waiting in the outbox, and those given up')
        .argument('[repo]', 'the same as --repo NAME (default: every repo)'),
      REGISTERED_WORKSPACE_HELP,
    ),
    [['agent-runner notify status --json', 'every repo, as JSON']],
  )
    .option('--json', 'print the result as JSON')
    .action(async (positional: string | undefined, options: Flags) => {
      const target = resolveTarget('notify status', { ...options, positional }, { workspace: true, required: false });
      setExit(await showStatus(context, target, Boolean(options.json)));
    });
}

async function sendTest(context: CliContext, target: Target, json: boolean): Promise<number> {
  requireRoot(context, 'notify test', "the webhooks' URLs live in the root-only registry");
  const { repo, registryFile } = await registeredTarget(context, 'notify test', target);
  const hooks = repo.notify ?? [];
  if (!hooks.length)
    throw new UsageError(
      configValueError(
        registryFile,
        `repos.${repo.name}.notify`,
        'the repo has no webhook',
        `add a [[repos.${repo.name}.notify]] (or [[defaults.notify]]) section with url = "https://…" (docs/operations.md, "Notifications")`,
      ),
    );
  const at = new Date(context.ports.clock.now()).toISOString();
  const event = {
    kind: TEST_EVENT_KIND,
    repo: repo.name,
    at,
    key: `test:${at}`,
    summary: `${repo.name}: a test notification (agent-runner notify test)`,
    details: {},
  } as const;
  const results = await Promise.all(
    hooks.map(async (hook) => ({
      webhook: redactUrl(hook.url),
      format: hook.format,
      events: hook.events,
      ...(await sendOnce(context.ports.notifyPosts, hook, event, SEND_POLICY.timeoutMs)),
    })),
  );
  if (json) context.out(`${JSON.stringify({ repo: repo.name, webhooks: results })}\n`);
  else
    for (const result of results)
      context.out(
        `${result.webhook} (${result.format}): ${result.ok ? `delivered (${result.status})` : `failed: ${result.error}`}\n`,
      );
  return results.every((result) => result.ok) ? EXIT.ok : EXIT.failed;
}

function shown(delivery: Delivery) {
  return {
    event: delivery.event.kind,
    key: delivery.event.key,
    webhook: redactUrl(delivery.hook.url),
    createdAt: delivery.createdAt,
    attempts: delivery.attempts,
    nextAt: delivery.gaveUpAt === undefined ? delivery.nextAt : undefined,
    gaveUpAt: delivery.gaveUpAt,
    ...(delivery.lastError === undefined ? {} : { lastError: delivery.lastError }),
  };
}

async function showStatus(context: CliContext, target: Target, json: boolean): Promise<number> {
  requireRoot(context, 'notify status', 'the outbox lives in the root-only state dir');
  const { registry, registryFile, state } = await loadRegistry(context);
  const repos =
    target.kind === 'none'
      ? registry.repos
      : [repoOfTarget('notify status', target, registry, registryFile, context.cwd)];
  const report = [];
  for (const repo of repos) {
    const outbox = new Outbox(context.ports.fs, state, repo.name);
    report.push({
      repo: repo.name,
      webhooks: (repo.notify ?? []).map((hook) => ({
        webhook: redactUrl(hook.url),
        format: hook.format,
        events: hook.events,
      })),
      pending: (await outbox.list('pending')).map(shown),
      failed: (await outbox.list('failed')).map(shown),
      delivered: (await outbox.list('delivered')).length,
    });
  }
  if (json) {
    context.out(`${JSON.stringify({ repos: report })}\n`);
    return EXIT.ok;
  }
  for (const entry of report) {
    context.out(
      `${entry.repo}: ${entry.webhooks.length} webhook${entry.webhooks.length === 1 ? '' : 's'}, ${entry.pending.length} pending, ${entry.failed.length} given up, ${entry.delivered} delivered\n`,
    );
    for (const item of entry.pending)
      context.out(
        `  pending  ${item.event} to ${item.webhook}: ${item.attempts} tries${item.lastError ? ` (${item.lastError})` : ''}, next at ${item.nextAt ?? '?'}\n`,
      );
    for (const item of entry.failed)
      context.out(
        `  gave up  ${item.event} to ${item.webhook} after ${item.attempts} tries: ${item.lastError ?? '?'}\n`,
      );
  }
  return EXIT.ok;
}
