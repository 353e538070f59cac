// Ending a task attempt's objects, and what dead runs left. A stop deletes the attempt's Job with the pod's own grace
// period (the task worker gets SIGTERM and its grace to hand over), a kill with gracePeriodSeconds 0; both in the
// background (the garbage collector takes the pods), then its Secret. At a drain's start, the Jobs and Secrets of the
// repo whose run label names a run that is no longer alive are deleted at once; objects without agent-runner's
// managed-by label, of another repo, or of a live run are left alone. An object already gone (404) is fine.
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { KubeRequestError, type KubeJobs } from '../port.js';
import { MANAGED_BY_LABEL, REPO_LABEL, RUN_LABEL, MANAGED_BY, repoSelector } from '../labels.js';

export type StopHow = 'stop' | 'kill';

async function unlessGone(deletion: Promise<void>): Promise<'deleted' | 'gone'> {
  try {
    await deletion;
    return 'deleted';
  } catch (error) {
    if (error instanceof KubeRequestError && error.status === 404) return 'gone';
    throw error;
  }
}

/** Deletes an attempt's Job (gracefully on stop, at once on kill) and then its Secret. */
export async function endAttempt(
  jobs: KubeJobs,
  names: { readonly job: string; readonly secret?: string },
  how: StopHow,
): Promise<void> {
  await unlessGone(jobs.deleteJob(names.job, how === 'kill' ? { gracePeriodSeconds: 0 } : {}));
  if (names.secret !== undefined) await unlessGone(jobs.deleteSecret(names.secret));
}

export interface LabelledObject {
  readonly kind: 'Job' | 'Secret';
  readonly metadata?: V1ObjectMeta;
}

/** Pure: the names of the objects of `repo` left by runs not in `aliveRuns`. */
export function deadRunObjects(
  objects: readonly LabelledObject[],
  repo: string,
  aliveRuns: ReadonlySet<string>,
): { readonly kind: 'Job' | 'Secret'; readonly name: string; readonly run: string }[] {
  return objects.flatMap((object) => {
    const labels = object.metadata?.labels ?? {};
    const name = object.metadata?.name;
    const run = labels[RUN_LABEL];
    if (!name || labels[MANAGED_BY_LABEL] !== MANAGED_BY || labels[REPO_LABEL] !== repo) return [];
    if (run === undefined || aliveRuns.has(run)) return [];
    return [{ kind: object.kind, name, run }];
  });
}

/** Lists the repo's Jobs and Secrets, deletes those of dead runs (Jobs at once), and says what it deleted. */
export async function removeDeadRuns(
  jobs: KubeJobs,
  repo: string,
  aliveRuns: ReadonlySet<string>,
): Promise<{ readonly kind: 'Job' | 'Secret'; readonly name: string; readonly run: string }[]> {
  const selector = repoSelector(repo);
  const listedJobs = await jobs.listJobs(selector);
  const listedSecrets = await jobs.listSecrets(selector);
  const dead = deadRunObjects(
    [
      ...listedJobs.items.map((job) => ({ kind: 'Job' as const, metadata: job.metadata })),
      ...listedSecrets.items.map((secret) => ({ kind: 'Secret' as const, metadata: secret.metadata })),
    ],
    repo,
    aliveRuns,
  );
  // Jobs first: a Secret goes only once no new pod of a dead run can start and mount it.
  for (const object of dead)
    if (object.kind === 'Job') await unlessGone(jobs.deleteJob(object.name, { gracePeriodSeconds: 0 }));
  for (const object of dead) if (object.kind === 'Secret') await unlessGone(jobs.deleteSecret(object.name));
  return [...dead.filter((o) => o.kind === 'Job'), ...dead.filter((o) => o.kind === 'Secret')];
}
