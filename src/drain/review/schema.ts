// The review verdict's JSON schema: what claude's --json-schema and codex's
// --output-schema hold the reviewer to, and what parseVerdictDoc checks a
// verdict against (verdict-doc.ts reads this object, so the two never
// differ). Strict, as codex needs it: every property required, no others,
// every string and list bounded. Pure.
import { SEVERITIES } from '../../repo/review-config.js';

/** The subset of draft-07 the verdict schema uses (and verdict-doc.ts checks). */
export type SchemaNode =
  | {
      readonly type: 'object';
      readonly properties: Readonly<Record<string, SchemaNode>>;
      readonly required: readonly string[];
      readonly additionalProperties: false;
    }
  | { readonly type: 'array'; readonly items: SchemaNode; readonly maxItems: number }
  | {
      readonly type: 'string';
      readonly maxLength: number;
      readonly enum?: readonly string[];
      readonly pattern?: string;
    }
  | { readonly type: 'integer'; readonly minimum: number; readonly maximum: number }
  | { readonly type: 'boolean' };

type ObjectNode = Extract<SchemaNode, { type: 'object' }>;

/** A "path:line" citation (a line number from 1). */
export const CITATION_PATTERN = '^.+:[1-9][0-9]*$';
const MAX_PATH_CITATION = 1024;

function object(properties: Record<string, SchemaNode>): ObjectNode {
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

const CRITERION = object({
  criterion: { type: 'integer', minimum: 1, maximum: 1000 },
  met: { type: 'boolean' },
  evidence: {
    type: 'array',
    maxItems: 20,
    items: { type: 'string', maxLength: MAX_PATH_CITATION, pattern: CITATION_PATTERN },
  },
  note: { type: 'string', maxLength: 2000 },
});

const FINDING = object({
  severity: { type: 'string', maxLength: 16, enum: SEVERITIES },
  location: { type: 'string', maxLength: MAX_PATH_CITATION, pattern: `^(${CITATION_PATTERN.slice(1, -1)})?$` },
  message: { type: 'string', maxLength: 4000 },
});

/** The verdict document: one object, every key required. */
export const VERDICT_SCHEMA: ObjectNode & { readonly $schema: string } = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  additionalProperties: false,
  required: ['task_id', 'round', 'nonce', 'candidate', 'verdict', 'criteria', 'findings', 'summary'],
  properties: {
    task_id: { type: 'string', maxLength: 64 },
    round: { type: 'integer', minimum: 1, maximum: 100 },
    nonce: { type: 'string', maxLength: 128 },
    candidate: { type: 'string', maxLength: 40, pattern: '^[0-9a-f]{40}$' },
    verdict: { type: 'string', maxLength: 32, enum: ['approve', 'changes_requested'] },
    criteria: { type: 'array', maxItems: 100, items: CRITERION },
    findings: { type: 'array', maxItems: 100, items: FINDING },
    summary: { type: 'string', maxLength: 4000 },
  },
};

/** The schema as JSON text, for a CLI flag or the schema file: draft-07, one line. */
export function verdictSchemaText(): string {
  return JSON.stringify(VERDICT_SCHEMA);
}
