// A reviewer's verdict from its text: bounded, JSON, and exactly the shape
// of VERDICT_SCHEMA (checked by walking that object, so the schema the CLIs
// are given and the check here are one rule). The text is the reviewer's,
// so nothing in it is trusted yet: this only says whether it is a verdict
// at all; drain/verdict/review.ts says what it is worth. Pure.
import type { VerdictDoc } from '../../types.js';
import { VERDICT_SCHEMA, type SchemaNode } from './schema.js';

/** The largest verdict read; a bigger one is unreadable. */
export const MAX_VERDICT_BYTES = 256 * 1024;
/** Problems named in one reason; the rest are counted. */
const MAX_PROBLEMS = 5;

const where = (at: string) => at || '(root)';
const join = (at: string, key: string) => (at ? `${at}.${key}` : key);

/** Every way `value` is not what `node` describes, each named with its key. */
function shapeProblems(node: SchemaNode, value: unknown, at: string, out: string[]): void {
  switch (node.type) {
    case 'object': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        out.push(`${where(at)}: must be an object`);
        return;
      }
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record))
        if (!Object.hasOwn(node.properties, key)) out.push(`${join(at, key)}: is not a key of a verdict`);
      for (const key of node.required) {
        if (!Object.hasOwn(record, key)) out.push(`${join(at, key)}: is missing`);
        else shapeProblems(node.properties[key]!, record[key], join(at, key), out);
      }
      return;
    }
    case 'array':
      if (!Array.isArray(value)) out.push(`${where(at)}: must be a list`);
      else if (value.length > node.maxItems)
        out.push(`${where(at)}: holds ${value.length} items, at most ${node.maxItems}`);
      else value.forEach((item, index) => shapeProblems(node.items, item, `${at}[${index}]`, out));
      return;
    case 'string':
      if (typeof value !== 'string') out.push(`${where(at)}: must be a string`);
      else if ([...value].length > node.maxLength)
        out.push(`${where(at)}: is longer than ${node.maxLength} characters`);
      else if (node.enum && !node.enum.includes(value))
        out.push(`${where(at)}: must be one of ${node.enum.join(', ')}`);
      else if (node.pattern && !new RegExp(node.pattern, 'u').test(value))
        out.push(`${where(at)}: ${JSON.stringify(value.slice(0, 80))} does not match ${node.pattern}`);
      return;
    case 'integer':
      if (!Number.isInteger(value) || (value as number) < node.minimum || (value as number) > node.maximum)
        out.push(`${where(at)}: must be a whole number from ${node.minimum} to ${node.maximum}`);
      return;
    case 'boolean':
      if (typeof value !== 'boolean') out.push(`${where(at)}: must be true or false`);
      return;
  }
}

/**
 * Pure: the verdict in `text` (undefined: the reviewer left none), or what keeps it from being one: no verdict,
 * too large, not JSON, or not the schema's shape (each problem named with its key).
 */
export function parseVerdictDoc(
  text: string | undefined,
  maxBytes: number = MAX_VERDICT_BYTES,
): VerdictDoc | { readonly problem: string } {
  if (text === undefined || text.trim() === '') return { problem: 'no verdict' };
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) return { problem: `the verdict is ${bytes} bytes, more than the ${maxBytes} allowed` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { problem: `the verdict is not JSON (${(error as Error).message})` };
  }
  const problems: string[] = [];
  shapeProblems(VERDICT_SCHEMA, json, '', problems);
  if (!problems.length) return json as VerdictDoc;
  const more = problems.length > MAX_PROBLEMS ? `; and ${problems.length - MAX_PROBLEMS} more` : '';
  return { problem: `the verdict is not in the schema's shape: ${problems.slice(0, MAX_PROBLEMS).join('; ')}${more}` };
}
