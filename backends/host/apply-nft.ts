// Loading the egress lock into the kernel. Check first (`nft -c`), then
// apply; the batch is atomic, so a refused or failed load leaves the table
// that was there before. Commands go through a wrapper so tests and doctor
// can aim them into a network namespace.
import * as path from 'node:path';
import type { FsPort, ProcessPort } from '../../src/ports.js';
import { FailedError } from '../../src/errors.js';
import { describeFailure, onHost, systemCommand, type CommandWrapper } from './exec.js';
import { EGRESS_FAMILY, EGRESS_TABLE, renderRuleset, type NftRuleset } from './nftables.js';

export interface NftDeps {
  readonly process: ProcessPort;
  readonly fs: FsPort;
  readonly wrap?: CommandWrapper;
}

export interface ApplyNftOptions {
  /** Where the applied ruleset is kept for the boot-time restore (egress.json). */
  readonly saveTo?: string;
}

/** Checks the ruleset with `nft -c -j -f`; resolves to the error text, or undefined when nft accepts it. */
export async function checkRuleset(deps: NftDeps, ruleset: NftRuleset): Promise<string | undefined> {
  return withRulesetFile(deps.fs, ruleset, async (file) => {
    const result = await deps.process.run((deps.wrap ?? onHost)(systemCommand('nft', ['-c', '-j', '-f', file])));
    return result.exitCode === 0 ? undefined : describeFailure(result);
  });
}

/** Checks, then applies the ruleset; a failed check never applies. */
export async function applyRuleset(deps: NftDeps, ruleset: NftRuleset, options: ApplyNftOptions = {}): Promise<void> {
  const wrap = deps.wrap ?? onHost;
  await withRulesetFile(deps.fs, ruleset, async (file) => {
    const check = await deps.process.run(wrap(systemCommand('nft', ['-c', '-j', '-f', file])));
    if (check.exitCode !== 0) {
      throw new FailedError(
        `nft refused the generated egress ruleset (${describeFailure(check)}); nothing was applied and the previous table stays in force. Fix the registry entry it names and provision again`,
      );
    }
    const apply = await deps.process.run(wrap(systemCommand('nft', ['-j', '-f', file])));
    if (apply.exitCode !== 0) {
      throw new FailedError(
        `nft could not apply the egress ruleset (${describeFailure(apply)}); the batch is atomic, so the previous table stays in force`,
      );
    }
  });
  if (options.saveTo) await deps.fs.writeAtomic(options.saveTo, renderRuleset(ruleset), 0o644);
}

/** The live table as nft lists it (parsed JSON), or undefined when it is not loaded. */
export async function listEgressTable(deps: NftDeps, table = EGRESS_TABLE): Promise<unknown> {
  const result = await deps.process.run(
    (deps.wrap ?? onHost)(systemCommand('nft', ['-j', 'list', 'table', EGRESS_FAMILY, table])),
  );
  if (result.exitCode !== 0) return undefined;
  try {
    return JSON.parse(result.stdout) as unknown;
  } catch {
    return undefined;
  }
}

async function withRulesetFile<T>(fs: FsPort, ruleset: NftRuleset, use: (file: string) => Promise<T>): Promise<T> {
  const dir = await fs.makeTempDir('agent-runner-nft-');
  try {
    const file = path.join(dir, 'ruleset.json');
    await fs.writeAtomic(file, renderRuleset(ruleset), 0o600);
    return await use(file);
  } finally {
    await fs.remove(dir);
  }
}
