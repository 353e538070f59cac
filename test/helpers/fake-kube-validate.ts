// What the API server would say to a manifest agent-runner builds: its
// OpenAPI schema (kubernetes-models, the same types the API server
// publishes) and then its own rules beyond the schema
// (backends/kubernetes/manifests/api-rules.ts). The builders' tests and the
// fake API server (which answers 422 with these problems) both call it.
// kubernetes-models is a development dependency, so this lives with the
// tests; the running code checks the rules and the serializer round trip.
import { Job } from 'kubernetes-models/batch/v1/Job';
import { Secret } from 'kubernetes-models/v1/Secret';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { apiServerProblems } from '../../backends/kubernetes/manifests/api-rules.js';

interface Validatable {
  validate(): void;
}

const MODELS: Readonly<Record<string, (data: never) => Validatable>> = {
  Job: (data) => new Job(data),
  Secret: (data) => new Secret(data),
  NetworkPolicy: (data) => new NetworkPolicy(data),
  Role: (data) => new Role(data),
  RoleBinding: (data) => new RoleBinding(data),
};

/** The schema's problems, each as "path: message". */
function schemaProblems(object: Record<string, unknown>): string[] {
  const model = MODELS[String(object.kind)];
  if (model === undefined) return [`kind: ${JSON.stringify(object.kind)} has no schema here`];
  try {
    model(structuredClone(object) as never).validate();
    return [];
  } catch (error) {
    const details = (error as { errors?: { instancePath?: string; message?: string }[] }).errors;
    if (!Array.isArray(details)) return [`(schema): ${error instanceof Error ? error.message : String(error)}`];
    return details.map(
      (detail) =>
        `${(detail.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.') || '(object)'}: ${detail.message ?? 'invalid'}`,
    );
  }
}

/** Every problem the API server would report for `object`: its schema's, then its own rules'. Empty: accepted. */
export function validateManifest(object: unknown): string[] {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return ['(object): is not an object'];
  return [...schemaProblems(object as Record<string, unknown>), ...apiServerProblems(object)];
}
