// Jobs and Secrets as the manifests make them, reduced to what the runtime reads (names, labels, the two
// containers), for tests of the watch, the logs, the outcomes and the deletes.
import type { V1Job, V1Secret } from '@kubernetes/client-node';
import { taskLabels, type TaskLabels } from '../../backends/kubernetes/labels.js';

export const NAMESPACE = 'agents';

export function aTaskJob(of: TaskLabels, name = `ar-${of.task.toLowerCase()}-${of.attempt}`): V1Job {
  const labels = taskLabels(of);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, labels },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: 600,
      ttlSecondsAfterFinished: 3600,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          initContainers: [{ name: 'clone', image: 'registry.invalid/runner@sha256:' + 'a'.repeat(64) }],
          containers: [{ name: 'agent', image: 'registry.invalid/runner@sha256:' + 'a'.repeat(64) }],
        },
      },
    },
  };
}

export function aTaskSecret(of: TaskLabels, name = `ar-${of.task.toLowerCase()}-${of.attempt}`): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, labels: taskLabels(of) },
    type: 'Opaque',
    stringData: { token: 'capability-secret-value' },
  };
}
