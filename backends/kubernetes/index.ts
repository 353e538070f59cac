// The Kubernetes backend: task workers as Jobs in a repo's namespace, the
// integrator unchanged on the host (docs/operations.md, "Task workers on
// Kubernetes").
export * from './labels.js';
export * from './manifests/index.js';
