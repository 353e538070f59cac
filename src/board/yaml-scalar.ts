// Renders one YAML scalar the way the Backlog.md CLI does. The CLI writes its
// frontmatter with js-yaml 3 (through gray-matter), whose quoting rules differ
// from the `yaml` package's: it single-quotes anything holding a colon, a
// leading indicator, a YAML 1.1 boolean such as `yes`, or text that would read
// back as a number, null or date, and double-quotes text with control or astral
// characters. Matching it keeps our edits byte-identical to the CLI's own.
// Not covered: the folded style js-yaml picks for single lines over ~78
// characters; those are single-quoted here, which every YAML reader accepts.

const DEPRECATED_BOOLEANS = new Set([
  'y',
  'Y',
  'yes',
  'Yes',
  'YES',
  'on',
  'On',
  'ON',
  'n',
  'N',
  'no',
  'No',
  'NO',
  'off',
  'Off',
  'OFF',
]);

// Values js-yaml 3's default schema would resolve to something other than a string.
const IMPLICIT_TYPES: readonly RegExp[] = [
  /^(?:~|null|Null|NULL)$/,
  /^(?:true|True|TRUE|false|False|FALSE)$/,
  /^[-+]?(?:0b[01_]+|0x[0-9a-fA-F_]+|0[0-7_]+|(?:0|[1-9][0-9_]*)|[1-9][0-9_]*(?::[0-5]?[0-9])+)$/,
  /^(?:[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9_]+(?:[eE][-+]?[0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/,
  /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/,
  /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?$/,
  /^<<$/,
];

function isPrintable(c: number): boolean {
  return (
    (c >= 0x20 && c <= 0x7e) ||
    (c >= 0xa1 && c <= 0xd7ff && c !== 0x2028 && c !== 0x2029) ||
    (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff) ||
    (c >= 0x10000 && c <= 0x10ffff)
  );
}

const isWhitespace = (c: number): boolean => c === 0x20 || c === 0x09;

function isPlainSafe(c: number, prev: number | undefined): boolean {
  if (!isPrintable(c) || c === 0xfeff) return false;
  if (',[]{}:'.includes(String.fromCharCode(c))) return false;
  // js-yaml 3.14 lets '#' through when it follows a non-space character.
  if (c === 0x23) return prev !== undefined && isPrintable(prev) && !isWhitespace(prev);
  return true;
}

function isPlainSafeFirst(c: number): boolean {
  return isPrintable(c) && c !== 0xfeff && !isWhitespace(c) && !'-?:,[]{}#&*!|>\'"%@`'.includes(String.fromCharCode(c));
}

const ESCAPES: Readonly<Record<number, string>> = {
  0x00: '\\0',
  0x07: '\\a',
  0x08: '\\b',
  0x09: '\\t',
  0x0a: '\\n',
  0x0b: '\\v',
  0x0c: '\\f',
  0x0d: '\\r',
  0x1b: '\\e',
  0x22: '\\"',
  0x5c: '\\\\',
  0x85: '\\N',
  0xa0: '\\_',
  0x2028: '\\L',
  0x2029: '\\P',
};

function escapeDouble(text: string): string {
  let result = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    const escape = ESCAPES[code];
    if (escape) result += escape;
    else if (isPrintable(code)) result += char;
    else if (code <= 0xff) result += `\\x${code.toString(16).toUpperCase().padStart(2, '0')}`;
    else if (code <= 0xffff) result += `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;
    else result += `\\U${code.toString(16).toUpperCase().padStart(8, '0')}`;
  }
  return result;
}

/** A single-line YAML scalar for `value`, quoted exactly when the Backlog.md CLI would quote it. */
export function yamlScalar(value: string): string {
  if (value.length === 0) return "''";
  if (DEPRECATED_BOOLEANS.has(value)) return `'${value}'`;
  // Astral characters count as printable only as a whole code point; js-yaml
  // 3 walks UTF-16 units, so a surrogate forces double quotes.
  for (let i = 0; i < value.length; i++) {
    if (!isPrintable(value.charCodeAt(i))) return `"${escapeDouble(value)}"`;
  }
  let plain = isPlainSafeFirst(value.charCodeAt(0)) && !isWhitespace(value.charCodeAt(value.length - 1));
  for (let i = 0; plain && i < value.length; i++) {
    plain = isPlainSafe(value.charCodeAt(i), i > 0 ? value.charCodeAt(i - 1) : undefined);
  }
  if (plain && !IMPLICIT_TYPES.some((pattern) => pattern.test(value))) return value;
  return `'${value.replace(/'/g, "''")}'`;
}
