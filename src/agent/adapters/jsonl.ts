// Reading an agent's JSON-lines stdout. Agents interleave other text (warnings,
// progress from tools) with their events, so a line that is not a JSON object
// is skipped, never fatal.

export type JsonObject = Record<string, unknown>;

/** The JSON objects among the lines, in order; anything else is dropped. */
export function jsonObjects(lines: readonly string[]): JsonObject[] {
  const objects: JsonObject[] = [];
  for (const raw of lines) {
    const line = raw.trim();
    if (!line.startsWith('{') || !line.endsWith('}')) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) objects.push(value as JsonObject);
    } catch {
      // garbage that happens to start with a brace
    }
  }
  return objects;
}

export function stringField(object: JsonObject | undefined, key: string): string | undefined {
  const value = object?.[key];
  return typeof value === 'string' ? value : undefined;
}

export function numberField(object: JsonObject | undefined, key: string): number | undefined {
  const value = object?.[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function objectField(object: JsonObject | undefined, key: string): JsonObject | undefined {
  const value = object?.[key];
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : undefined;
}

/** True when nothing but whitespace came out on stdout. */
export function isSilent(lines: readonly string[]): boolean {
  return lines.every((line) => line.trim() === '');
}

/** The last non-empty stderr line, for a crash detail. */
export function lastStderrLine(stderrTail: string): string | undefined {
  const lines = stderrTail
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return lines[lines.length - 1];
}

/** "exit 3", "signal SIGKILL": how a process ended, in words. */
export function describeExit(exitCode: number | null, signal: string | null): string {
  if (signal) return `signal ${signal}`;
  return `exit ${exitCode ?? 'unknown'}`;
}
