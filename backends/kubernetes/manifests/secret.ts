// The Secret of one task attempt: what only its agent container is given
// (the agent's credential or the broker's capability, and the token that may
// push this attempt's result ref). Immutable, labelled like its Job, so the
// orphan sweep finds it by the same selector. Pure.
import type { V1Secret } from '@kubernetes/client-node';
import { taskLabels } from '../labels.js';
import { ManifestSpecError, PUSH_TOKEN_KEY, taskObjectName, type TaskSecretSpec } from './spec.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** The API server's cap on a Secret's data. */
export const SECRET_MAX_BYTES = 1024 * 1024;

/** Pure: the Secret of one task attempt, named like its Job. Throws ManifestSpecError for a value it cannot carry. */
export function taskSecretManifest(spec: TaskSecretSpec): V1Secret {
  if (!Object.hasOwn(spec.values, PUSH_TOKEN_KEY))
    throw new ManifestSpecError(
      spec,
      'values',
      `has no ${PUSH_TOKEN_KEY}`,
      'put the per-task push token in the Secret',
    );
  const data: Record<string, string> = {};
  let bytes = 0;
  for (const [key, value] of Object.entries(spec.values)) {
    if (!ENV_NAME.test(key))
      throw new ManifestSpecError(spec, `values.${key}`, 'is not a variable name', 'use letters, digits and "_"');
    if (value === '')
      throw new ManifestSpecError(
        spec,
        `values.${key}`,
        'is empty',
        'pass the credential itself, or leave the key out',
      );
    const encoded = Buffer.from(value, 'utf8');
    bytes += encoded.length;
    data[key] = encoded.toString('base64');
  }
  if (bytes > SECRET_MAX_BYTES)
    throw new ManifestSpecError(
      spec,
      'values',
      `hold ${bytes} bytes; a Secret holds at most ${SECRET_MAX_BYTES}`,
      'pass credentials, not files',
    );
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: taskObjectName(spec), namespace: spec.namespace, labels: taskLabels(spec) },
    type: 'Opaque',
    immutable: true,
    data,
  };
}
