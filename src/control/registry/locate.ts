// Pointing the operator at the line: where a table or a key sits in the
// registry's text. A plain scan, good enough to name the spot, never used
// for meaning (smol-toml gives the meaning).

/** The table a header line opens ("repos.web" for `[repos . "web"]`), or undefined for any other line (an array of tables too). */
function tableOfHeader(line: string): string | undefined {
  const trimmed = line.trim();
  const header = /^\[\s*([^\]]+?)\s*\]/.exec(trimmed);
  if (!header || trimmed.startsWith('[[')) return undefined;
  return header[1]!.replace(/\s*\.\s*/g, '.').replace(/"/g, '');
}

/**
 * The line (1-based) of `key` inside table `table` ("repos.web", "defaults"),
 * or of the table header when key is undefined or not found.
 */
export function lineOf(text: string, table: string, key?: string): number | undefined {
  const lines = text.split('\n');
  let current = '';
  let headerLine: number | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    const header = tableOfHeader(line);
    if (header !== undefined) {
      current = header;
      if (current === table && headerLine === undefined) headerLine = i + 1;
      continue;
    }
    if (key !== undefined && current === table) {
      const assignment = /^"?([A-Za-z0-9_-]+)"?\s*=/.exec(line);
      if (assignment && assignment[1] === key) return i + 1;
    }
  }
  return headerLine;
}

/** `file:line` of `key` in `table` (its first dotted part: env.NAME points at env), or the file alone when neither is found. */
export function locate(text: string, file: string, table: string, key: string | undefined): string {
  const line = lineOf(text, table, key?.split('.')[0]);
  return line === undefined ? file : `${file}:${line}`;
}

/** [start, end) line indexes of repo `name`'s section and its sub-tables, or undefined. Comments that introduce the next section stay with it. */
export function sectionRange(lines: readonly string[], name: string): { start: number; end: number } | undefined {
  const own = (line: string): boolean | undefined => {
    const table = tableOfHeader(line);
    if (table === undefined) return undefined;
    return table === `repos.${name}` || table.startsWith(`repos.${name}.`);
  };
  const start = lines.findIndex((line) => own(line) === true);
  if (start < 0) return undefined;
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    if (own(lines[i]!) === false) {
      end = i;
      break;
    }
  }
  while (end > start + 1 && /^\s*(#.*)?$/.test(lines[end - 1]!)) end--;
  return { start, end };
}
