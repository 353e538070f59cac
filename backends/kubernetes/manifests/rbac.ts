// What the runner may do in a repo's namespace, and nothing more: Jobs
// (create, read, watch, delete), their pods and logs (read), and the
// attempts' Secrets (create, read, delete). No exec, no attach, no other
// kind: the runner never reaches into a running pod. Pure.
import type { V1Role, V1RoleBinding } from '@kubernetes/client-node';
import { MANAGED_BY, MANAGED_BY_LABEL } from '../labels.js';
import { RUNNER_ROLE_NAME, type RunnerRoleBindingSpec, type RunnerRoleSpec } from './spec.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** Pure: the runner's Role in a namespace. */
export function runnerRole(spec: RunnerRoleSpec): V1Role {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'Role',
    metadata: { name: RUNNER_ROLE_NAME, namespace: spec.namespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
    rules: [
      { apiGroups: ['batch'], resources: ['jobs'], verbs: ['create', 'get', 'list', 'watch', 'delete'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['create', 'get', 'list', 'delete'] },
    ],
  };
}

/** Pure: the binding of the runner's Role to the runner's identity in the cluster. */
export function runnerRoleBinding(spec: RunnerRoleBindingSpec): V1RoleBinding {
  const { subject } = spec;
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'RoleBinding',
    metadata: { name: RUNNER_ROLE_NAME, namespace: spec.namespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: RUNNER_ROLE_NAME },
    subjects: [
      subject.kind === 'User'
        ? { kind: 'User', apiGroup: RBAC_GROUP, name: subject.name }
        : { kind: 'ServiceAccount', name: subject.name, namespace: subject.namespace },
    ],
  };
}
