// Agent text made safe for root's terminal. Task titles, reasons, details and
// error messages can carry whatever an agent wrote; a raw ESC sequence in
// them can retitle the window (OSC 0), clear the screen (CSI 2J), write the
// clipboard (OSC 52) or hide a line (\r, bidi overrides). Pure.

/** A complete escape sequence: CSI, OSC/DCS/SOS/PM/APC strings (to BEL or ST), or a two-byte ESC form. */
const ESCAPE_SEQUENCE = new RegExp(
  [
    '(?:\\u001b\\[|\\u009b)[\\u0030-\\u003f]*[\\u0020-\\u002f]*[\\u0040-\\u007e]?', // CSI (incl. private params like ?1049h)
    '(?:\\u001b[\\]PX^_]|[\\u0090\\u0098\\u009d\\u009e\\u009f])[^\\u0007\\u001b\\u009c]*(?:\\u0007|\\u001b\\\\|\\u009c)?', // OSC, DCS, SOS, PM, APC
    '\\u001b[\\u0020-\\u002f]*[\\u0030-\\u007e]?', // ESC with intermediates (charset switches, RIS, ...)
  ].join('|'),
  'g',
);

/**
 * Everything that is not printable text: C0 controls but \n and \t, DEL,
 * C1 controls, bidi embeddings/overrides/isolates and marks, zero-width
 * characters and other invisible format characters, line/paragraph
 * separators, and interlinear annotation / object replacement tricks.
 */
// Matching control characters is the point here; the tag characters are a surrogate pair on purpose.
const NOT_PRINTABLE =
  // eslint-disable-next-line no-control-regex, no-misleading-character-class
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\ufff9-\ufffb]|\udb40[\udc00-\udc7f]/g;

/** Agent text with escape sequences and invisible controls removed; newlines and tabs are kept. */
export function printable(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, '').replace(NOT_PRINTABLE, '');
}

/** printable, on one line: newlines and tabs become spaces, so text cannot forge a line of its own. */
export function printableLine(text: string): string {
  return printable(text).replace(/[\n\t]+/g, ' ');
}

/**
 * The last guard at the output sink: any control or format character still
 * present becomes a visible `\uXXXX`. Lossless for JSON (it is the JSON
 * escape of the same character) and inert on a terminal for human text.
 */
export function escapeForTerminal(text: string): string {
  return text.replace(NOT_PRINTABLE, (ch) =>
    ch
      .split('')
      .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)
      .join(''),
  );
}
