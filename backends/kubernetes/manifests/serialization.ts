// @kubernetes/client-node sends an object through its ObjectSerializer,
// which keeps only the fields its model classes know and drops the rest
// without a word: a misspelled field (bakoffLimit) or one newer than the
// client would leave the API server a Job without it. So a builder's output
// is checked to come back from serialize and deserialize unchanged, field by
// field. 1.x does not export the serializer from its entry; it is taken from
// its module (the package declares no exports map, so the path is public).
import { ObjectSerializer } from '@kubernetes/client-node/dist/serializer.js';
import { FailedError } from '../../../src/errors.js';

/** The model class names the builders' objects are sent as. */
export type SerializedType = 'V1Job' | 'V1Secret' | 'V1NetworkPolicy' | 'V1Role' | 'V1RoleBinding';

/** Plain JSON, as it would be sent: undefined fields gone. */
function plain(value: unknown): unknown {
  return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown);
}

/** Pure: each path where `after` differs from `before` ("spec.bakoffLimit: dropped"). */
function differences(before: unknown, after: unknown, at: string, found: string[]): void {
  if (typeof before === 'object' && before !== null && typeof after === 'object' && after !== null) {
    if (Array.isArray(before) !== Array.isArray(after)) {
      found.push(`${at || '(object)'}: changed`);
      return;
    }
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    for (const key of keys) {
      const path = Array.isArray(before) ? `${at}[${key}]` : at ? `${at}.${key}` : key;
      const had = Object.hasOwn(before, key);
      const has = Object.hasOwn(after, key);
      if (had && !has) found.push(`${path}: dropped`);
      else if (!had && has) found.push(`${path}: added`);
      else differences((before as Record<string, unknown>)[key], (after as Record<string, unknown>)[key], path, found);
    }
    return;
  }
  if (before !== after) found.push(`${at || '(object)'}: ${JSON.stringify(before)} became ${JSON.stringify(after)}`);
}

/**
 * Whether `object` survives the client's serializer as `typeName`: serialized (what is sent) and serialized again
 * after a deserialize (what a read gives back), both equal to the input. Returns every difference found.
 */
export function survivesSerialization(
  object: unknown,
  typeName: SerializedType,
): { ok: true } | { ok: false; differences: string[] } {
  const input = plain(object);
  const sent = plain(ObjectSerializer.serialize(object, typeName));
  const found: string[] = [];
  differences(input, sent, '', found);
  if (found.length === 0) {
    const read = plain(ObjectSerializer.serialize(ObjectSerializer.deserialize(sent, typeName), typeName));
    differences(input, read, '', found);
  }
  return found.length === 0 ? { ok: true } : { ok: false, differences: found };
}

/** A manifest the client would change on its way to the API server. */
export class SerializationLossError extends FailedError {
  constructor(typeName: string, name: string, found: readonly string[]) {
    super(
      `the ${typeName} ${name} would not reach the API server as built (@kubernetes/client-node drops fields it does not know): ${found.join('; ')}; fix the builder's field names, or upgrade the client for a newer field`,
    );
    this.name = 'SerializationLossError';
  }
}

/** The guard a caller runs before sending: returns `object`, or throws SerializationLossError naming each loss. */
export function serializedUnchanged<T>(object: T, typeName: SerializedType): T {
  const result = survivesSerialization(object, typeName);
  if (!result.ok) {
    const name = String((object as { metadata?: { name?: unknown } }).metadata?.name ?? '(unnamed)');
    throw new SerializationLossError(typeName, name, result.differences);
  }
  return object;
}
