// A fake kubelet and Job controller for the loopback fake API server (fake-kube-api.ts): when a Job is created it
// makes the Job's pod and runs its init containers' commands, then its containers', as REAL local processes, in a
// temp root of the pod's own where the pod's paths (POD_PATHS: /work, /tmp, /home/agent) are folders; the paths are
// mapped in argv, env values and workingDir. A container's env is its spec's, with secretKeyRef values read from the
// stored Secret (a missing Secret or key keeps the container waiting on CreateContainerConfigError, as the kubelet
// does), plus the image's own PATH. Stdout and stderr become the container's log, each line timestamped to the
// nanosecond and served by the fake's pods/log. The pod's status and the Job's conditions follow as the real
// controllers set them: Complete; Failed through the Job's podFailurePolicy (FailJob, Ignore: a replacement pod,
// Count) or its backoffLimit; DeadlineExceeded past activeDeadlineSeconds; an image it is told cannot be pulled waits
// on ErrImagePull. `evict(pod)` marks the pod DisruptionTarget and ends its processes. Deleting the Job ends its
// processes: SIGTERM, then SIGKILL after the grace (the DELETE's gracePeriodSeconds, else the kubelet's default).
// Every process group it started is killed when the test ends.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import * as path from 'node:path';
import type { Test } from 'tap';
import type { FakeKubeApi, KubeObject, StoreChange } from './fake-kube-api.js';
import { POD_PATHS } from '../../backends/kubernetes/manifests/spec.js';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
}

interface ContainerSpec {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: EnvVar[];
}

interface PodFailureRule {
  action: 'FailJob' | 'Ignore' | 'Count' | 'FailIndex';
  onExitCodes?: { containerName?: string; operator: 'In' | 'NotIn'; values: number[] };
  onPodConditions?: { type: string; status?: string }[];
}

interface JobSpec {
  activeDeadlineSeconds?: number;
  backoffLimit?: number;
  podFailurePolicy?: { rules: PodFailureRule[] };
  template?: { spec?: { initContainers?: ContainerSpec[]; containers?: ContainerSpec[] } };
}

type Json = Record<string, unknown>;

interface PodRun {
  readonly namespace: string;
  readonly job: string;
  readonly name: string;
  readonly root: string;
  readonly status: { phase: string; conditions: Json[]; initContainerStatuses: Json[]; containerStatuses: Json[] };
  /** The running container's process group, while one runs. */
  child?: ChildProcess;
  /** Why its processes are being ended: the pod is evicted, its Job is past its deadline, or deleted. */
  ending?: 'evicted' | 'deadline' | 'deleted';
  killTimer?: NodeJS.Timeout;
}

interface JobRun {
  readonly namespace: string;
  readonly name: string;
  readonly spec: JobSpec;
  readonly pods: PodRun[];
  done: boolean;
  deadline?: NodeJS.Timeout;
  failedPods: number;
}

export interface FakeKubeletOptions {
  readonly namespace: string;
  /** Where each pod gets its root folder. */
  readonly root: string;
  /** The image's own environment (its PATH): local binaries stand in for the image's. */
  readonly imageEnv?: Readonly<Record<string, string>>;
  /**
   * The image's own programs: a container command naming one runs the local file given (the pod's paths would map a
   * host path under /tmp, so a test's script is named here, not in the manifest).
   */
  readonly imageBinaries?: Readonly<Record<string, string>>;
  /** Whether an image can be pulled (default: every one). */
  readonly pullable?: (image: string) => boolean;
  /** The pods' grace period when a DELETE gives none (the pod spec's default is 30 s; tests want less). */
  readonly graceMs?: number;
}

export interface FakeKubelet {
  /** Evicts a pod, as the eviction API does: DisruptionTarget, then its processes ended with the grace. */
  evict(pod: string): void;
  /** The pods made so far, oldest first (names). */
  pods(): string[];
  /** The pods whose container processes are running now. */
  running(): string[];
  /** Every process a container ran, with its argv as the kubelet started it and the env it was given. */
  readonly started: { pod: string; container: string; argv: string[]; cwd: string; env: Record<string, string> }[];
}

const SIGNALS = constants.signals as Record<string, number>;

/** Where one container's termination message is written, in its pod's folder. */
const terminationLogOf = (pod: { readonly root: string }, container: string) =>
  path.join(pod.root, `termination-log-${container}`);

/** A log line's time: RFC 3339 with nanoseconds, strictly increasing, as the container runtime writes it. */
function stamper(): () => string {
  let last = 0n;
  return () => {
    let now = BigInt(Date.now()) * 1_000_000n;
    if (now <= last) now = last + 1n;
    last = now;
    const seconds = new Date(Number(now / 1_000_000_000n) * 1000).toISOString().replace(/\.\d{3}Z$/, '');
    return `${seconds}.${String(now % 1_000_000_000n).padStart(9, '0')}Z`;
  };
}

/** The first rule of the Job's podFailurePolicy the ended pod matches, and its index. */
export function podFailureRule(
  spec: JobSpec,
  pod: Pick<PodRun['status'], 'conditions' | 'containerStatuses' | 'initContainerStatuses'>,
): { readonly rule: PodFailureRule; readonly index: number; readonly why: string } | undefined {
  const rules = spec.podFailurePolicy?.rules ?? [];
  for (const [index, rule] of rules.entries()) {
    for (const wanted of rule.onPodConditions ?? []) {
      const found = pod.conditions.find((c) => c.type === wanted.type && c.status === (wanted.status ?? 'True'));
      if (found) return { rule, index, why: `has condition ${wanted.type}` };
    }
    const codes = rule.onExitCodes;
    if (codes)
      for (const status of [...pod.initContainerStatuses, ...pod.containerStatuses]) {
        if (codes.containerName !== undefined && status.name !== codes.containerName) continue;
        const code = (status.state as { terminated?: { exitCode: number } } | undefined)?.terminated?.exitCode;
        if (code === undefined || code === 0) continue;
        if (codes.operator === 'In' ? codes.values.includes(code) : !codes.values.includes(code))
          return { rule, index, why: `container ${String(status.name)} failed with exit code ${code}` };
      }
  }
  return undefined;
}

export function startFakeKubelet(t: Test, api: FakeKubeApi, options: FakeKubeletOptions): FakeKubelet {
  const { namespace } = options;
  const jobs = new Map<string, JobRun>();
  const podsByName = new Map<string, PodRun>();
  const started: FakeKubelet['started'] = [];
  const stamp = stamper();
  const graceMs = options.graceMs ?? 2000;
  let podCount = 0;
  let closed = false;

  const podExists = (pod: PodRun) => api.pods(namespace).some((p) => p.metadata.name === pod.name);
  const jobExists = (job: JobRun) => api.job(namespace, job.name) !== undefined;

  function publish(pod: PodRun): void {
    if (closed || !podExists(pod)) return;
    api.setPod(namespace, pod.job, pod.name, structuredClone(pod.status));
  }

  function setJob(job: JobRun, status: Json): void {
    if (closed || !jobExists(job)) return;
    api.setJobStatus(namespace, job.name, { startTime: new Date().toISOString(), ...status });
  }

  function failJob(job: JobRun, reason: string, message: string): void {
    if (job.done) return;
    job.done = true;
    if (job.deadline) clearTimeout(job.deadline);
    const condition = { status: 'True', reason, message, lastTransitionTime: new Date().toISOString() };
    setJob(job, {
      failed: job.failedPods,
      conditions: [
        { type: 'FailureTarget', ...condition },
        { type: 'Failed', ...condition },
      ],
    });
  }

  function completeJob(job: JobRun): void {
    if (job.done) return;
    job.done = true;
    if (job.deadline) clearTimeout(job.deadline);
    const condition = { status: 'True', lastTransitionTime: new Date().toISOString() };
    setJob(job, {
      succeeded: 1,
      completionTime: new Date().toISOString(),
      conditions: [
        { type: 'SuccessCriteriaMet', ...condition, reason: 'CompletionsReached' },
        { type: 'Complete', ...condition, reason: 'CompletionsReached' },
      ],
    });
  }

  /** A pod path, or a path under one, as the folder of this pod's root that stands for it. */
  function mapped(pod: PodRun, value: string): string {
    const places: [string, string][] = [
      [POD_PATHS.work, path.join(pod.root, 'work')],
      [POD_PATHS.tmp, path.join(pod.root, 'tmp')],
      [POD_PATHS.home, path.join(pod.root, 'home')],
    ];
    for (const [inPod, local] of places)
      if (value === inPod || value.startsWith(`${inPod}/`)) return local + value.slice(inPod.length);
    return value;
  }

  /** The container's environment, or why the kubelet cannot make it (CreateContainerConfigError). */
  function environment(pod: PodRun, container: ContainerSpec): Record<string, string> | string {
    const env: Record<string, string> = { ...(options.imageEnv ?? { PATH: process.env.PATH ?? '/usr/bin:/bin' }) };
    for (const entry of container.env ?? []) {
      if (entry.value !== undefined) {
        env[entry.name] = mapped(pod, entry.value);
        continue;
      }
      const ref = entry.valueFrom?.secretKeyRef;
      if (!ref) continue;
      const secret = api.secrets(namespace).find((s) => s.metadata.name === ref.name) as
        (KubeObject & { data?: Record<string, string>; stringData?: Record<string, string> }) | undefined;
      if (!secret) {
        if (ref.optional) continue;
        return `secret "${ref.name}" not found`;
      }
      const encoded = secret.data?.[ref.key];
      const value =
        encoded !== undefined ? Buffer.from(encoded, 'base64').toString('utf8') : secret.stringData?.[ref.key];
      if (value === undefined) {
        if (ref.optional) continue;
        return `couldn't find key ${ref.key} in Secret ${namespace}/${ref.name}`;
      }
      env[entry.name] = value;
    }
    return env;
  }

  function statusOf(pod: PodRun, init: boolean, name: string): Json {
    const list = init ? pod.status.initContainerStatuses : pod.status.containerStatuses;
    const found = list.find((s) => s.name === name);
    if (!found) throw new Error(`fake kubelet: no status for container ${name} of ${pod.name}`);
    return found;
  }

  /** Runs one container to its end: its exit code (128 + the signal for a signal). */
  function runContainer(pod: PodRun, container: ContainerSpec, init: boolean): Promise<number> | string {
    const env = environment(pod, container);
    if (typeof env === 'string') return env;
    const argv = [...(container.command ?? []), ...(container.args ?? [])].map((arg) => mapped(pod, arg));
    const program = argv[0] === undefined ? undefined : options.imageBinaries?.[argv[0]];
    if (program !== undefined) argv[0] = program;
    // The kubelet mounts an empty file at the container's terminationMessagePath (/dev/termination-log) and reads it
    // back as the terminated state's message; here the file is the pod's own, named to the worker by its override.
    const terminationLog = terminationLogOf(pod, container.name);
    writeFileSync(terminationLog, '');
    env.AGENT_RUNNER_TERMINATION_LOG ??= terminationLog;
    const cwd = container.workingDir ? mapped(pod, container.workingDir) : pod.root;
    // The container runtime makes a workingDir that does not exist.
    mkdirSync(cwd, { recursive: true });
    started.push({ pod: pod.name, container: container.name, argv, cwd, env });
    const status = statusOf(pod, init, container.name);
    status.state = { running: { startedAt: new Date().toISOString() } };
    status.started = true;
    pod.status.phase = init ? 'Pending' : 'Running';
    publish(pod);
    return new Promise<number>((resolve) => {
      const write = (line: string) => api.writeLog(namespace, pod.name, container.name, stamp(), line);
      let child: ChildProcess;
      try {
        child = spawn(argv[0] ?? '', argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      } catch (error) {
        write(String(error));
        resolve(128);
        return;
      }
      pod.child = child;
      const partial = { stdout: '', stderr: '' };
      const take = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
        const lines = (partial[stream] + chunk.toString('utf8')).split('\n');
        partial[stream] = lines.pop() ?? '';
        for (const line of lines) write(line);
      };
      child.stdout!.on('data', take('stdout'));
      child.stderr!.on('data', take('stderr'));
      // A command that cannot start is the runtime's StartError: exit 128.
      let unstarted = false;
      child.on('error', (error) => {
        unstarted = true;
        write(`exec: ${error.message}`);
      });
      child.on('close', (code, signal) => {
        for (const rest of [partial.stdout, partial.stderr]) if (rest) write(rest);
        pod.child = undefined;
        if (pod.killTimer) clearTimeout(pod.killTimer);
        resolve(unstarted ? 128 : (code ?? 128 + (signal ? (SIGNALS[signal] ?? 0) : 0)));
      });
    });
  }

  function terminated(pod: PodRun, init: boolean, name: string, exitCode: number): void {
    const status = statusOf(pod, init, name);
    let message = '';
    try {
      message = readFileSync(terminationLogOf(pod, name), 'utf8').slice(0, 4096);
    } catch {
      // The container never started: no message.
    }
    status.state = {
      terminated: {
        exitCode,
        reason: exitCode === 0 ? 'Completed' : 'Error',
        finishedAt: new Date().toISOString(),
        ...(message ? { message } : {}),
      },
    };
    status.ready = false;
    api.endLog(namespace, pod.name, name);
  }

  async function runPod(job: JobRun, pod: PodRun): Promise<void> {
    const spec = job.spec.template?.spec ?? {};
    const steps = [
      ...(spec.initContainers ?? []).map((container) => ({ container, init: true })),
      ...(spec.containers ?? []).map((container) => ({ container, init: false })),
    ];
    for (const { container, init } of steps) {
      if (container.image && options.pullable && !options.pullable(container.image)) {
        statusOf(pod, init, container.name).state = {
          waiting: {
            reason: 'ErrImagePull',
            message: `rpc error: code = NotFound desc = failed to pull and unpack image "${container.image}": not found`,
          },
        };
        publish(pod);
        return;
      }
      if (pod.ending) break;
      const run = runContainer(pod, container, init);
      if (typeof run === 'string') {
        statusOf(pod, init, container.name).state = {
          waiting: { reason: 'CreateContainerConfigError', message: run },
        };
        publish(pod);
        return;
      }
      const exitCode = await run;
      terminated(pod, init, container.name, exitCode);
      if (exitCode !== 0 || pod.ending) break;
    }
    podEnded(job, pod);
  }

  function podEnded(job: JobRun, pod: PodRun): void {
    const statuses = [...pod.status.initContainerStatuses, ...pod.status.containerStatuses];
    const ok = statuses.every(
      (s) => (s.state as { terminated?: { exitCode: number } } | undefined)?.terminated?.exitCode === 0,
    );
    pod.status.phase = ok && !pod.ending ? 'Succeeded' : 'Failed';
    publish(pod);
    if (pod.ending === 'deleted' || job.done || closed) return;
    if (pod.ending === 'deadline') {
      failJob(job, 'DeadlineExceeded', 'Job was active longer than specified deadline');
      return;
    }
    if (pod.status.phase === 'Succeeded') {
      completeJob(job);
      return;
    }
    const matched = podFailureRule(job.spec, pod.status);
    if (matched?.rule.action === 'Ignore') {
      startPod(job);
      return;
    }
    if (matched?.rule.action === 'FailJob') {
      failJob(
        job,
        'PodFailurePolicy',
        `Pod ${namespace}/${pod.name} ${matched.why} matching FailJob rule at index ${matched.index}`,
      );
      return;
    }
    job.failedPods += 1;
    if (job.failedPods > (job.spec.backoffLimit ?? 6)) {
      failJob(job, 'BackoffLimitExceeded', 'Job has reached the specified backoff limit');
      return;
    }
    startPod(job);
  }

  function startPod(job: JobRun): void {
    podCount += 1;
    const name = `${job.name}-${String(podCount).padStart(5, '0')}`;
    const root = path.join(options.root, name);
    for (const dir of ['work', 'tmp', 'home']) mkdirSync(path.join(root, dir), { recursive: true });
    const spec = job.spec.template?.spec ?? {};
    const waiting = (container: ContainerSpec) => ({
      name: container.name,
      image: container.image ?? '',
      imageID: '',
      ready: false,
      restartCount: 0,
      started: false,
      state: { waiting: { reason: 'PodInitializing' } },
    });
    const pod: PodRun = {
      namespace,
      job: job.name,
      name,
      root,
      status: {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'True' }],
        initContainerStatuses: (spec.initContainers ?? []).map(waiting),
        containerStatuses: (spec.containers ?? []).map(waiting),
      },
    };
    job.pods.push(pod);
    podsByName.set(name, pod);
    api.setPod(namespace, job.name, name, structuredClone(pod.status));
    void runPod(job, pod);
  }

  /** SIGTERM to the pod's process group, SIGKILL after the grace. */
  function endProcesses(pod: PodRun, why: NonNullable<PodRun['ending']>, grace: number): void {
    pod.ending ??= why;
    const child = pod.child;
    if (!child?.pid) return;
    const group = child.pid;
    const signal = (name: NodeJS.Signals) => {
      try {
        process.kill(-group, name);
      } catch {
        // already gone
      }
    };
    if (grace <= 0) {
      signal('SIGKILL');
      return;
    }
    signal('SIGTERM');
    pod.killTimer = setTimeout(() => signal('SIGKILL'), grace);
  }

  function jobCreated(object: KubeObject): void {
    const spec = (object.spec ?? {}) as JobSpec;
    const job: JobRun = { namespace, name: object.metadata.name, spec, pods: [], done: false, failedPods: 0 };
    jobs.set(job.name, job);
    if (spec.activeDeadlineSeconds !== undefined)
      job.deadline = setTimeout(() => {
        if (job.done) return;
        const live = job.pods.filter((pod) => pod.status.phase === 'Pending' || pod.status.phase === 'Running');
        for (const pod of live) endProcesses(pod, 'deadline', graceMs);
        // A pod still waiting (on its image, or its config) has nothing to end: the Job fails at once.
        if (!live.some((pod) => pod.child))
          failJob(job, 'DeadlineExceeded', 'Job was active longer than specified deadline');
      }, spec.activeDeadlineSeconds * 1000);
    startPod(job);
  }

  function jobDeleted(name: string, gracePeriodSeconds: number | undefined): void {
    const job = jobs.get(name);
    if (!job) return;
    job.done = true;
    if (job.deadline) clearTimeout(job.deadline);
    for (const pod of job.pods)
      endProcesses(pod, 'deleted', gracePeriodSeconds === undefined ? graceMs : gracePeriodSeconds * 1000);
  }

  const unobserve = api.observe((change: StoreChange) => {
    if (change.resource !== 'jobs' || change.namespace !== namespace) return;
    if (change.type === 'ADDED') jobCreated(change.object);
    if (change.type === 'DELETED') jobDeleted(change.object.metadata.name, change.gracePeriodSeconds);
  });

  t.teardown(() => {
    closed = true;
    unobserve();
    for (const job of jobs.values()) if (job.deadline) clearTimeout(job.deadline);
    for (const pod of podsByName.values()) {
      if (pod.killTimer) clearTimeout(pod.killTimer);
      const pid = pod.child?.pid;
      if (pid)
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // already gone
        }
    }
  });

  return {
    evict(name) {
      const pod = podsByName.get(name);
      if (!pod) throw new Error(`fake kubelet: no pod ${name} to evict`);
      pod.status.conditions.push({
        type: 'DisruptionTarget',
        status: 'True',
        reason: 'EvictionByEvictionAPI',
        message: 'Eviction API: evicting',
        lastTransitionTime: new Date().toISOString(),
      });
      publish(pod);
      endProcesses(pod, 'evicted', graceMs);
    },
    pods: () => [...podsByName.keys()],
    running: () => [...podsByName.values()].filter((pod) => pod.child).map((pod) => pod.name),
    started,
  };
}
