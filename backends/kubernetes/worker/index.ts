// The pod's side of a task attempt: the worker the Job's agent container
// runs (agent-runner pod-worker), its settings variable, its exit codes and
// the push of its result.
export { runPodWorker, DEFAULT_TERMINATION_LOG, type PodWorkerDeps } from './run.js';
export {
  podWorkerEnv,
  readPodWorkerSettings,
  POD_WORKER_VARIABLE,
  type PodWorkerSettings,
  type PodWorkerExtra,
} from './settings.js';
export { POD_WORKER_EXIT, podWorkerEnding, type PodWorkerEnding } from './exit-codes.js';
export { resultPushCommand, type ResultPush } from './push.js';
