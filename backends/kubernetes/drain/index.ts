// The drain's Kubernetes path: task attempts as Jobs behind the drain's RemoteAttempts seam
// (docs/kubernetes-runtime.md, "The drain's side").
export { kubeAttempts } from './attempts.js';
export { MAX_EVICTIONS, PODLESS_BOUND_MS, POD_WORKER_ARGV, type AttemptRef, type KubeTaskDeps } from './deps.js';
export { afterJob, podLineEvent, type AfterJob, type JobEnd } from './verdict.js';
export { kubeTargetOf, runnerKubeAttempts, type RunnerKubeInput } from './runner.js';
