// The manifests of the Kubernetes backend: pure builders for what a repo's
// namespace holds (a Job and a Secret per task attempt, the repo's
// NetworkPolicy, the runner's Role and RoleBinding), the API server's rules
// beyond the schema, and the serializer round trip the client must not spoil.
export * from './spec.js';
export { taskJobManifest } from './job.js';
export { taskSecretManifest, SECRET_MAX_BYTES } from './secret.js';
export { repoNetworkPolicy } from './network-policy.js';
export { runnerRole, runnerRoleBinding } from './rbac.js';
export { bytesQuantity, cpuRequest } from './quantity.js';
export { apiServerProblems, RULED_KINDS } from './api-rules.js';
export {
  serializedUnchanged,
  survivesSerialization,
  SerializationLossError,
  type SerializedType,
} from './serialization.js';
