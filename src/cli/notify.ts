// agent-runner notify test REPO | notify status [REPO]: send one test event
// to each of a repo's webhooks now (not through the outbox, so the operator
// sees each answer), and list what waits in the outbox or was given up.
// Root only: the registry and the outbox hold the webhooks' URLs, which
// this command never prints past their host.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT, UsageError, configValueError } from '../errors.js';
import { findRepo } from '../control/registry/parse.js';
import { loadRegistry, requireRoot } from './root-support.js';
import { Outbox, redactUrl, SEND_POLICY, sendOnce, TEST_EVENT_KIND, type Delivery } from '../control/notify/index.js';

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .command('test')
    .description("send one test event to each of the repo's webhooks, now")
    .argument('<repo>', 'a repo name from the registry')
    .option('--json', 'print the result as JSON')
    .action(async (repoName: string, options: { json?: boolean }) => {
      setExit(await sendTest(context, repoName, Boolean(options.json)));
    });
  command
    .command('status')
    .description('deliveries waiting in the outbox, and those given up')
    .argument('[repo]', 'one repo (default: every repo)')
    .option('--json', 'print the result as JSON')
    .action(async (repoName: string | undefined, options: { json?: boolean }) => {
      setExit(await showStatus(context, repoName, Boolean(options.json)));
    });
}

async function sendTest(context: CliContext, repoName: string, json: boolean): Promise<number> {
  requireRoot(context, 'notify test', "the webhooks' URLs live in the root-only registry");
  const { registry, registryFile } = await loadRegistry(context);
  const repo = findRepo(registry, repoName, registryFile);
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
      ...(await sendOnce(context.ports.webhooks, hook, event, SEND_POLICY.timeoutMs)),
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

async function showStatus(context: CliContext, repoName: string | undefined, json: boolean): Promise<number> {
  requireRoot(context, 'notify status', 'the outbox lives in the root-only state dir');
  const { registry, registryFile, state } = await loadRegistry(context);
  const repos = repoName ? [findRepo(registry, repoName, registryFile)] : registry.repos;
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
