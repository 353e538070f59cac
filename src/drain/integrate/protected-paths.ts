// What a task may not change: the runner's own .agent/ directory (its config,
// prompt, setup and gate) and the gates script wherever the config puts it.
// The integrator judges a task by that gate; a task that could rewrite it
// would judge itself. Such a task is parked for a human before any merge.
// Pure: every input is a parameter.

/** The runner's directory in a repo, relative to the repo root. */
export const AGENT_DIR = '.agent';

/**
 * The repo-relative paths a task may not touch: `.agent` itself and
 * everything below it, and the gates script when it lives elsewhere.
 */
export function protectedRoots(gatesScript: string | undefined): string[] {
  const roots = [AGENT_DIR];
  if (gatesScript !== undefined && !isUnder(gatesScript, AGENT_DIR)) roots.push(normalize(gatesScript));
  return roots;
}

function normalize(file: string): string {
  return file
    .split('/')
    .filter((part) => part !== '' && part !== '.')
    .join('/');
}

function isUnder(file: string, root: string): boolean {
  const normalized = normalize(file);
  return normalized === root || normalized.startsWith(`${root}/`);
}

/** Pure: the changed paths (as git prints them, repo-relative) that are protected, in order. */
export function protectedPathsIn(changed: readonly string[], gatesScript: string | undefined): string[] {
  const roots = protectedRoots(gatesScript);
  return changed.filter((file) => roots.some((root) => isUnder(file, root)));
}

export type CandidateVerdict =
  | { readonly kind: 'integrate' }
  | { readonly kind: 'park'; readonly reason: string; readonly paths: readonly string[] };

const LISTED = 5;

/** The park reason for a task that changed protected paths. */
function protectedPathsReason(paths: readonly string[]): string {
  const shown = paths.slice(0, LISTED).join(', ') + (paths.length > LISTED ? ` and ${paths.length - LISTED} more` : '');
  return `changes ${AGENT_DIR}/ or the gates script (${shown}): a task may not change the runner's config or the gate that judges it; a human must review the branch and merge it by hand`;
}

/**
 * Pure: whether a finished task may go to the integrator, from the paths its
 * branch changed since it forked from auto/work (merge-base..branch, renames
 * as delete + add).
 */
export function judgeCandidate(changed: readonly string[], gatesScript: string | undefined): CandidateVerdict {
  const paths = protectedPathsIn(changed, gatesScript);
  return paths.length ? { kind: 'park', reason: protectedPathsReason(paths), paths } : { kind: 'integrate' };
}
