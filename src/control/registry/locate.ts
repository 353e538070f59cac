// Pointing the operator at the line: where a table or a key sits in the
// registry's text. A plain scan, good enough to name the spot, never used
// for meaning (smol-toml gives the meaning).

/**
 * The table a header line opens ("repos.web" for `[repos . "web"]`), or undefined for any other line (an array of
 * tables too).
 */
function tableOfHeader(line: string): string | undefined {
  const trimmed = line.trim();
  const header = /^\[\s*([^\]]+?)\s*\]/.exec(trimmed);
  if (!header || trimmed.startsWith('[[')) return undefined;
  return header[1]!.replace(/\s*\.\s*/g, '.').replace(/"/g, '');
}

/**
 * Where every table header and key sits, from one pass over the text: a
 * registry with thousands of problems is located in one scan, not one scan
 * per problem.
 */
export class LineIndex {
  /** table -> its first header line, and the first line of each key inside it (1-based). */
  private readonly tables = new Map<string, { header: number | undefined; keys: Map<string, number> }>();

  constructor(text: string) {
    const lines = text.split('\n');
    let current = '';
    this.tables.set('', { header: undefined, keys: new Map() });
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!.trim();
      const header = tableOfHeader(line);
      if (header !== undefined) {
        current = header;
        const entry = this.tables.get(current);
        if (!entry) this.tables.set(current, { header: i + 1, keys: new Map() });
        else entry.header ??= i + 1;
        continue;
      }
      const assignment = /^"?([A-Za-z0-9_-]+)"?\s*=/.exec(line);
      const keys = this.tables.get(current)!.keys;
      if (assignment && !keys.has(assignment[1]!)) keys.set(assignment[1]!, i + 1);
    }
  }

  /**
   * The line of `key` inside `table` ("repos.web", "defaults", "" for the top), or of the table header when key is
   * undefined or not found.
   */
  lineOf(table: string, key?: string): number | undefined {
    const entry = this.tables.get(table);
    if (!entry) return undefined;
    return (key === undefined ? undefined : entry.keys.get(key)) ?? entry.header;
  }

  /**
   * `file:line` of `key` in `table`: a dotted key (broker.anthropic_key_file) at its line in the sub-table's own
   * section, else at its first part (env = { ... }); the table's header, or the file alone, when neither is found.
   */
  locate(file: string, table: string, key: string | undefined): string {
    const [first, inner] = key?.split('.') ?? [];
    // A key of a sub-table written as its own section ([repos.web.broker], [repos.web.env]) sits there.
    const section = inner === undefined ? undefined : this.tables.get(`${table}.${first}`);
    const line = (section && (section.keys.get(inner!) ?? section.header)) ?? this.lineOf(table, first);
    return line === undefined ? file : `${file}:${line}`;
  }
}

/** The line (1-based) of `key` inside table `table`, or of the table header. One scan: for a single lookup. */
export function lineOf(text: string, table: string, key?: string): number | undefined {
  return new LineIndex(text).lineOf(table, key);
}

/** `file:line` of `key` in `table`, or the file alone. One scan: for a single lookup. */
export function locate(text: string, file: string, table: string, key: string | undefined): string {
  return new LineIndex(text).locate(file, table, key);
}

/**
 * [start, end) line indexes of repo `name`'s section and its sub-tables, or undefined. Comments that introduce the next
 * section stay with it.
 */
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
