/**
 * What the CLI prints may come from a gateway or a receiver it does not control. A terminal obeys
 * control characters: an escape sequence can recolour or clear the screen, move the cursor to
 * overwrite a line, set the window title, or (in some terminals) write to the clipboard. So every
 * line the CLI prints goes through {@link printable}, and JSON output through {@link jsonText}.
 */

/**
 * ESC sequences, whole: CSI (`ESC [` parameters, final byte), the string commands OSC, DCS, SOS,
 * PM and APC (`ESC ]`, `P`, `X`, `^`, `_` up to BEL, `ESC \` or the end of the text), and the
 * two- or three-character ones (`ESC (B`, `ESC c`, ...). A lone ESC goes too.
 */
const ESCAPE_SEQUENCES =
  // eslint-disable-next-line no-control-regex
  /\u001b(?:\[[\u0030-\u003f]*[\u0020-\u002f]*[\u0040-\u007e]?|[\]PX^_][\s\S]*?(?:\u0007|\u001b\\|$)|[\u0020-\u002f]*[\u0030-\u007e])?/g;

/** C0 controls except tab and line feed, DEL, and the C1 controls (8-bit CSI, OSC, ...). */
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** `text` without escape sequences and control characters: tab and line feed stay. */
export function printable(text: string): string {
  return text.replace(ESCAPE_SEQUENCES, '').replace(CONTROLS, '');
}

/**
 * `value` as indented JSON that a terminal shows as it is. JSON.stringify escapes C0 controls in
 * strings but not DEL or C1 ones; these are escaped too (`\u009b`), so the data stays intact.
 */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    /[\u007f-\u009f]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * Rows as aligned columns (two spaces apart), each cell printable and on one line: a line break
 * in data from elsewhere could fake a row.
 */
export function tableLines(rows: readonly (readonly string[])[]): string[] {
  const cells = rows.map((row) => row.map((cell) => printable(cell).replace(/[\t\n]/g, ' ')));
  const widths = cells[0]!.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)));
  return cells.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd(),
  );
}
