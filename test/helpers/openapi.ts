// GitHub's official OpenAPI description (@octokit/openapi), loaded once per
// test file, and a small JSON-schema check of the OpenAPI 3.0 subset it uses
// ($ref, allOf/anyOf/oneOf, nullable, type, enum, required, properties,
// additionalProperties, items, bounds, pattern). The fake GitHub server
// validates every request it gets and every answer it gives with it, so the
// fake cannot drift from the real API. oneOf is checked as "at least one":
// GitHub's alternatives overlap, and the real API's answers would fail a
// strict check.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from './source-imports.js';

type Schema = Record<string, unknown>;
interface Spec {
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Schema>;
    responses: Record<string, unknown>;
    parameters: Record<string, unknown>;
  };
}
export interface Operation {
  operationId: string;
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
}

let loaded: Spec | undefined;

/** The api.github.com description, parsed once. */
export function githubSpec(): Spec {
  loaded ??= JSON.parse(
    readFileSync(path.join(REPO_ROOT, 'node_modules/@octokit/openapi/generated/api.github.com.json'), 'utf8'),
  ) as Spec;
  return loaded;
}

function deref<T>(value: T): T {
  let current = value as unknown;
  for (let i = 0; i < 20 && current && typeof current === 'object' && '$ref' in (current as Schema); i++) {
    const ref = (current as { $ref: string }).$ref;
    current = ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>(
        (node, key) => (node as Record<string, unknown>)[key.replace(/~1/g, '/').replace(/~0/g, '~')],
        githubSpec(),
      );
    if (current === undefined) throw new Error(`unresolvable $ref ${ref}`);
  }
  return current as T;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** Every way `value` breaks `schema`, as "at: problem" lines; [] when it conforms. */
export function schemaErrors(schemaIn: unknown, value: unknown, at = '$'): string[] {
  const schema = deref(schemaIn as Schema);
  if (!schema || typeof schema !== 'object') return [];
  if (value === null && (schema.nullable === true || schema.type === 'null')) return [];
  const errors: string[] = [];
  if (Array.isArray(schema.allOf)) for (const part of schema.allOf) errors.push(...schemaErrors(part, value, at));
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options) && !options.some((option) => schemaErrors(option, value, at).length === 0)) {
      errors.push(
        `${at}: matches none of ${key} (${options.map((option) => schemaErrors(option, value, at)[0]).join(' / ')})`,
      );
    }
  }
  const type = schema.type as string | string[] | undefined;
  if (type !== undefined) {
    const actual = typeOf(value);
    const allowed = Array.isArray(type) ? type : [type];
    const ok = allowed.some((entry) => entry === actual || (entry === 'number' && actual === 'integer'));
    if (!ok)
      return [...errors, `${at}: is ${actual}, must be ${allowed.join('|')}${value === null ? ' (not nullable)' : ''}`];
  }
  if (
    value === null &&
    type === undefined &&
    !schema.anyOf &&
    !schema.oneOf &&
    !schema.allOf &&
    Object.keys(schema).some((key) => key === 'properties')
  )
    errors.push(`${at}: is null, not nullable`);
  if (Array.isArray(schema.enum) && !schema.enum.includes(value))
    errors.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  if (typeof value === 'string') {
    if (typeof schema.minLength === 'number' && value.length < schema.minLength)
      errors.push(`${at}: shorter than ${schema.minLength}`);
    if (typeof schema.maxLength === 'number' && value.length > schema.maxLength)
      errors.push(`${at}: longer than ${schema.maxLength}`);
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value))
      errors.push(`${at}: does not match ${schema.pattern}`);
    if (schema.format === 'date-time' && Number.isNaN(Date.parse(value))) errors.push(`${at}: not a date-time`);
    if (schema.format === 'uri' && !/^[a-z][a-z0-9+.-]*:/i.test(value)) errors.push(`${at}: not a URI`);
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) errors.push(`${at}: below ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) errors.push(`${at}: above ${schema.maximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems)
      errors.push(`${at}: fewer than ${schema.minItems} items`);
    if (schema.items) value.forEach((item, i) => errors.push(...schemaErrors(schema.items, item, `${at}[${i}]`)));
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const object = value as Record<string, unknown>;
    const properties = (schema.properties ?? {}) as Record<string, unknown>;
    for (const name of (schema.required as string[] | undefined) ?? [])
      if (!(name in object)) errors.push(`${at}: required property "${name}" is missing`);
    for (const [name, item] of Object.entries(object)) {
      if (name in properties) errors.push(...schemaErrors(properties[name], item, `${at}.${name}`));
      else if (schema.additionalProperties === false) errors.push(`${at}: property "${name}" is not allowed`);
      else if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
        errors.push(...schemaErrors(schema.additionalProperties, item, `${at}.${name}`));
    }
  }
  return errors;
}

/** A minimal instance of `schema`: every required property, first enum values, nulls where allowed. */
export function exampleOf(schemaIn: unknown): unknown {
  const schema = deref(schemaIn as Schema);
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map((part) => exampleOf(part)));
  if (Array.isArray(schema.anyOf)) return exampleOf(schema.anyOf[0]);
  if (Array.isArray(schema.oneOf)) return exampleOf(schema.oneOf[0]);
  if (schema.nullable === true) return null;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type.find((entry) => entry !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return schema.format === 'date-time'
        ? '2026-11-30T12:00:00Z'
        : schema.format === 'uri'
          ? 'https://example.invalid/x'
          : schema.format === 'email'
            ? 'a@example.invalid'
            : 'x';
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return false;
    case 'array':
      return typeof schema.minItems === 'number' && schema.minItems > 0 ? [exampleOf(schema.items)] : [];
    default: {
      const properties = (schema.properties ?? {}) as Record<string, unknown>;
      return Object.fromEntries(
        ((schema.required as string[] | undefined) ?? []).map((name) => [name, exampleOf(properties[name] ?? {})]),
      );
    }
  }
}

/** A component schema by name (e.g. "pull-request"). */
export function componentSchema(name: string): Schema {
  const schema = githubSpec().components.schemas[name];
  if (!schema) throw new Error(`no schema ${name}`);
  return schema;
}

/** Deep merge for building answers: `patch` wins; arrays are replaced. */
export function merged<T>(base: T, patch: unknown): T {
  if (!patch || typeof patch !== 'object' || Array.isArray(patch) || !base || typeof base !== 'object')
    return patch as T;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [key, value] of Object.entries(patch))
    out[key] =
      key in out && value && typeof value === 'object' && !Array.isArray(value) ? merged(out[key], value) : value;
  return out as T;
}

export interface MatchedOperation {
  readonly template: string;
  readonly method: string;
  readonly operation: Operation;
  readonly params: Record<string, string>;
}

/** The documented operation a request is, with its path parameters. */
export function findOperation(method: string, pathname: string): MatchedOperation | undefined {
  const spec = githubSpec();
  const segments = pathname.split('/');
  for (const [template, item] of Object.entries(spec.paths)) {
    const parts = template.split('/');
    if (parts.length !== segments.length) continue;
    const operation = item[method.toLowerCase()];
    if (!operation) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < parts.length && ok; i++) {
      const part = parts[i]!;
      if (/^\{.+\}$/.test(part)) params[part.slice(1, -1)] = decodeURIComponent(segments[i]!);
      else ok = part === segments[i];
    }
    if (ok) return { template, method: method.toLowerCase(), operation, params };
  }
  // Branch names hold slashes: {branch} takes the rest of the path.
  const branch = /^\/repos\/([^/]+)\/([^/]+)\/branches\/(.+)$/.exec(pathname);
  if (branch && method.toLowerCase() === 'get') {
    const template = '/repos/{owner}/{repo}/branches/{branch}';
    return {
      template,
      method: 'get',
      operation: spec.paths[template]!.get!,
      params: { owner: branch[1]!, repo: branch[2]!, branch: decodeURIComponent(branch[3]!) },
    };
  }
  return undefined;
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: unknown;
}

/**
 * What is wrong with a request by the operation's description: unknown query parameters, bad values, a body that breaks
 * the schema.
 */
export function requestErrors(match: MatchedOperation, query: URLSearchParams, body: unknown): string[] {
  const errors: string[] = [];
  const parameters = (match.operation.parameters ?? []).map((parameter) => deref(parameter as Parameter));
  const known = new Map(
    parameters.filter((parameter) => parameter.in === 'query').map((parameter) => [parameter.name, parameter]),
  );
  for (const [name, value] of query) {
    const parameter = known.get(name);
    if (!parameter) errors.push(`query parameter "${name}" is not documented for ${match.operation.operationId}`);
    else {
      const schema = deref((parameter.schema ?? {}) as Schema);
      const typed =
        schema.type === 'integer' || schema.type === 'number'
          ? Number(value)
          : schema.type === 'boolean'
            ? value === 'true'
            : value;
      errors.push(...schemaErrors(schema, typed, `query.${name}`));
    }
  }
  for (const parameter of parameters)
    if (parameter.in === 'query' && parameter.required && !query.has(parameter.name))
      errors.push(`required query parameter "${parameter.name}" is missing`);
  const requestBody = match.operation.requestBody
    ? deref(match.operation.requestBody as { required?: boolean; content: Record<string, { schema: unknown }> })
    : undefined;
  if (body !== undefined) {
    const schema = requestBody?.content['application/json']?.schema;
    if (!schema) errors.push(`${match.operation.operationId} takes no JSON body`);
    else errors.push(...schemaErrors(schema, body, 'body'));
  } else if (requestBody?.required) errors.push(`${match.operation.operationId} requires a body`);
  return errors;
}

/** What is wrong with an answer: a status the operation does not document, or a body that breaks its schema. */
export function responseErrors(match: MatchedOperation, status: number, body: unknown): string[] {
  const documented = match.operation.responses[String(status)] ?? match.operation.responses.default;
  if (!documented)
    return [
      `${match.operation.operationId} does not document status ${status} (documents ${Object.keys(match.operation.responses).join(', ')})`,
    ];
  const response = deref(documented as { content?: Record<string, { schema?: unknown }> });
  const schema = response.content?.['application/json']?.schema;
  if (!schema) return body === undefined ? [] : [`${match.operation.operationId} ${status} has no body`];
  return schemaErrors(schema, body, `response ${status}`);
}
